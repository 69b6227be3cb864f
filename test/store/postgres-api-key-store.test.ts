import { describe } from "node:test";
import { openMigratedStores, postgresUnavailable, useMigratedDatabase } from "../support/postgres.js";
import { describeApiKeyStoreContract } from "./api-key-store-contract.js";

const unavailable = await postgresUnavailable();

if (unavailable) {
  describe("postgres stores: API key store contract", { skip: unavailable }, () => {});
} else {
  // Each test's stores are opened anew, on that test's clock, on an emptied database.
  const database = useMigratedDatabase();
  describeApiKeyStoreContract("postgres stores", async (clock) => {
    await database.empty();
    const stores = await openMigratedStores(database.url(), { migrate: false, poolMax: 2, clock });
    return { keys: stores.apiKeys, close: () => stores.close() };
  });
}
