import { after, before, describe } from "node:test";
import { createSecretBox } from "../../src/webhooks/secret-box.js";
import { contractMerchants } from "../store/contract-records.js";
import type { MakeEventStores } from "../store/event-contract-support.js";
import { describeEventOutboxContract } from "../store/event-outbox-contract.js";
import { describeEventStoreContract } from "../store/event-store-contract.js";
import { describeWebhookEndpointStoreContract } from "../store/webhook-endpoint-store-contract.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";

const unavailable = await postgresUnavailable();

if (unavailable) {
  describe("postgres stores: event, outbox and webhook endpoint contracts", { skip: unavailable }, () => {});
} else {
  // One migrated database for the file, emptied before every test; each
  // test's stores are opened anew, since the outbox is given at opening.
  let database: TestDatabase;
  // Secrets sealed for real, so what the contract reads back went through the box.
  const secretBox = createSecretBox({ key: Buffer.alloc(32, 5) });

  before(async () => {
    database = await createTestDatabase();
    await (await openMigratedStores(database.url, { poolMax: 1 })).close();
  });
  after(() => database?.drop());

  const makeStores: MakeEventStores = async (outbox) => {
    // Every table hangs off merchants, so this empties them all.
    await queryDatabase(database.url, "truncate merchants cascade");
    const stores = await openMigratedStores(database.url, { migrate: false, poolMax: 8, outbox, secretBox });
    for (const merchantId of Object.values(contractMerchants)) await stores.apiKeys.ensureMerchant(merchantId, merchantId);
    return {
      intents: stores.intents,
      accounts: stores.accounts,
      events: stores.events,
      endpoints: stores.endpoints,
      queue: stores.deliveryQueue,
      close: () => stores.close(),
    };
  };

  describeEventStoreContract("postgres stores", makeStores);
  describeEventOutboxContract("postgres stores", makeStores);
  describeWebhookEndpointStoreContract("postgres stores", makeStores);
}
