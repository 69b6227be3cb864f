import { createMemoryStores } from "../../src/store/memory/create-memory-stores.js";
import type { MakeEventStores } from "./event-contract-support.js";
import { describeEventOutboxContract } from "./event-outbox-contract.js";
import { describeEventStoreContract } from "./event-store-contract.js";
import { describeWebhookEndpointStoreContract } from "./webhook-endpoint-store-contract.js";

const makeMemoryStores: MakeEventStores = async (outbox) => {
  const stores = createMemoryStores({ outbox });
  return { ...stores, queue: stores.deliveryQueue, close: async () => {} };
};

describeEventStoreContract("memory stores", makeMemoryStores);
describeEventOutboxContract("memory stores", makeMemoryStores);
describeWebhookEndpointStoreContract("memory stores", makeMemoryStores);
