import { after, before, describe } from "node:test";
import { createSecretBox } from "../../src/lib/secret-box.js";
import { contractMerchants } from "../store/contract-records.js";
import type { MakeEventStores } from "../store/event-contract-support.js";
import { describeEventOutboxContract } from "../store/event-outbox-contract.js";
import { describeEventStoreContract } from "../store/event-store-contract.js";
import { describeWebhookEndpointStoreContract } from "../store/webhook-endpoint-store-contract.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { pgBouncerUnavailable, startPgBouncer, type PgBouncer } from "./support/pgbouncer.js";

const unavailable = await postgresUnavailable();
const noPgBouncer = pgBouncerUnavailable();

if (unavailable) {
  describe("postgres stores: event, outbox and webhook endpoint contracts", { skip: unavailable }, () => {});
} else {
  // One migrated database for the file, emptied before every test; each
  // test's stores are opened anew, since the outbox is given at opening.
  let database: TestDatabase;
  let bouncer: PgBouncer | undefined;
  // Secrets sealed for real, so what the contract reads back went through the box.
  const secretBox = createSecretBox({ key: Buffer.alloc(32, 5) });

  before(async () => {
    database = await createTestDatabase();
    await (await openMigratedStores(database.url, { poolMax: 1 })).close();
    if (!noPgBouncer) {
      const direct = new URL(database.url);
      bouncer = await startPgBouncer({ target: { host: direct.hostname, port: Number(direct.port || 5432) }, poolSize: 4, users: ["postgres"] });
    }
  });
  after(async () => {
    await bouncer?.stop();
    await database?.drop();
  });

  /** Stores directly on the database, or through PgBouncer in transaction pooling (no named prepared statement). */
  const makeStoresOn = (path: () => string): MakeEventStores => async (outbox) => {
    // Every table hangs off merchants, so this empties them all.
    await queryDatabase(database.url, "truncate merchants cascade");
    const stores = await openMigratedStores(path(), { migrate: false, poolMax: 8, outbox, secretBox });
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

  const direct = makeStoresOn(() => database.url);
  describeEventStoreContract("postgres stores", direct);
  describeEventOutboxContract("postgres stores", direct);
  describeWebhookEndpointStoreContract("postgres stores", direct);

  describe("through PgBouncer", { skip: noPgBouncer }, () => {
    const pooled = makeStoresOn(() => bouncer!.urlFor(database.url));
    describeEventStoreContract("postgres stores via PgBouncer", pooled);
    describeEventOutboxContract("postgres stores via PgBouncer", pooled);
    describeWebhookEndpointStoreContract("postgres stores via PgBouncer", pooled);
  });
}
