import { after, before, describe } from "node:test";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { contractMerchants, paymentIntentStoreContract } from "./payment-intent-store-contract.js";

const unavailable = await postgresUnavailable();

if (unavailable) {
  describe("postgres stores: store contract", { skip: unavailable }, () => {});
} else {
  // One fresh database for this run, emptied before every test: the contract
  // asks for empty stores each time, and a database per test would be slow.
  let database: TestDatabase;
  let stores: PostgresStores;
  let emptyTables: () => Promise<void>;

  before(async () => {
    database = await createTestDatabase();
    stores = await openMigratedStores(database.url);
    emptyTables = async () => {
      // Every table hangs off merchants, so this empties them all.
      await queryDatabase(database.url, "truncate merchants cascade");
    };
  });

  after(async () => {
    await stores?.close();
    await database?.drop();
  });

  paymentIntentStoreContract("postgres stores", async () => {
    await emptyTables();
    for (const merchantId of Object.values(contractMerchants)) await stores.apiKeys.ensureMerchant(merchantId, merchantId);
    return { intents: stores.intents, accounts: stores.accounts };
  });
}
