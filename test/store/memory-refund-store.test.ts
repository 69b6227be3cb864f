import { createMemoryStores } from "../../src/store/memory/create-memory-stores.js";
import { describeRefundStoreContract } from "./refund-store-contract.js";

describeRefundStoreContract("memory stores", async (outbox) => {
  const stores = createMemoryStores({ outbox });
  return { intents: stores.intents, refunds: stores.refunds, events: stores.events, close: async () => {} };
});
