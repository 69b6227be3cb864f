import { createIdGenerator } from "../../src/lib/ids.js";
import { createMemoryApiKeyStore } from "../../src/store/memory/memory-api-key-store.js";
import { describeApiKeyStoreContract } from "./api-key-store-contract.js";

describeApiKeyStoreContract("memory stores", async (clock) => ({
  keys: createMemoryApiKeyStore({ clock, newKeyId: createIdGenerator(clock).apiKeyId }),
  close: async () => {},
}));
