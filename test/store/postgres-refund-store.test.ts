import { after, before, describe } from "node:test";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { contractMerchants } from "./contract-records.js";
import { describeRefundStoreContract } from "./refund-store-contract.js";

const unavailable = await postgresUnavailable();

if (unavailable) {
  describe("postgres stores: refund store contract", { skip: unavailable }, () => {});
} else {
  // One migrated database for the file, emptied before every test; each
  // test's stores are opened anew, since the outbox is given at opening.
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
    await (await openMigratedStores(database.url, { poolMax: 1 })).close();
  });
  after(() => database?.drop());

  describeRefundStoreContract("postgres stores", async (outbox) => {
    // Every table hangs off merchants, so this empties them all.
    await queryDatabase(database.url, "truncate merchants cascade");
    const stores = await openMigratedStores(database.url, { migrate: false, poolMax: 8, outbox });
    for (const merchantId of Object.values(contractMerchants)) await stores.apiKeys.ensureMerchant(merchantId, merchantId);
    return { intents: stores.intents, refunds: stores.refunds, events: stores.events, close: () => stores.close() };
  });
}
