import { createMemoryStores } from "../../src/store/memory/create-memory-stores.js";
import { paymentIntentStoreContract } from "./payment-intent-store-contract.js";

paymentIntentStoreContract("memory stores", async () => createMemoryStores());
