import { after, before, describe } from "node:test";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { describeApiKeyStoreContract } from "./api-key-store-contract.js";

const unavailable = await postgresUnavailable();

if (unavailable) {
  describe("postgres stores: API key store contract", { skip: unavailable }, () => {});
} else {
  // One migrated database for the file, emptied before every test; each
  // test's stores are opened anew, on that test's clock.
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
    await (await openMigratedStores(database.url, { poolMax: 1 })).close();
  });
  after(() => database?.drop());

  describeApiKeyStoreContract("postgres stores", async (clock) => {
    // Every table hangs off merchants, so this empties them all.
    await queryDatabase(database.url, "truncate merchants cascade");
    const stores = await openMigratedStores(database.url, { migrate: false, poolMax: 2, clock });
    return { keys: stores.apiKeys, close: () => stores.close() };
  });
}
