import { createMemoryPaymentIntentStore } from "../../src/store/memory/memory-payment-intent-store.js";
import { createMemorySettlementAccountStore } from "../../src/store/memory/memory-settlement-account-store.js";
import { paymentIntentStoreContract } from "./payment-intent-store-contract.js";

paymentIntentStoreContract("memory stores", async () => ({
  intents: createMemoryPaymentIntentStore(),
  accounts: createMemorySettlementAccountStore(),
}));
