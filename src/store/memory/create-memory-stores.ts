import type { PaymentIntentStore } from "../payment-intent-store.js";
import type { SettlementAccountStore } from "../settlement-account-store.js";
import { createMemoryAccountTable } from "./memory-account-table.js";
import { createMemoryPaymentIntentStore } from "./memory-payment-intent-store.js";
import { createMemorySettlementAccountStore } from "./memory-settlement-account-store.js";

/** The in-memory data stores, sharing one set of settlement accounts. */
export interface MemoryStores {
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
}

/**
 * createMemoryStores builds the in-memory intent and account stores over the
 * same accounts, so a list item shows the account registered through the
 * account store, as one PostgreSQL database does.
 */
export function createMemoryStores(): MemoryStores {
  const table = createMemoryAccountTable();
  return {
    intents: createMemoryPaymentIntentStore({ accounts: table }),
    accounts: createMemorySettlementAccountStore(table),
  };
}
