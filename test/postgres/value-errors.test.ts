import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { createDatabase, type Database } from "../../src/store/postgres/database.js";
import { refusedValueMessages } from "../../src/store/postgres/database-errors.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { adminQuery, createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { createLiveIntents } from "./support/live-intents.js";

const skip = await postgresUnavailable();
const clock = createSystemClock();
const ids = createIdGenerator(clock);
const liveIntent = createLiveIntents(clock, ids);

const intentOf = (clientReference: string, overrides: Partial<PaymentIntentRecord> = {}) => liveIntent({ clientReference, ...overrides });

async function assertInvalid(call: Promise<unknown>, message: string): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof ConnectError, String(error));
    assert.equal(error.code, Code.InvalidArgument, error.rawMessage);
    assert.equal(error.rawMessage, message);
    return true;
  });
}

describe("values PostgreSQL refuses", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  let database: Database;

  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url, { poolMax: 2 });
    await stores.apiKeys.ensureMerchant("merchantA", "A");
    database = createDatabase({ url: db.url, poolMax: 1, statementTimeoutMs: 5000, lockTimeoutMs: 2000 });
  });
  after(async () => {
    await stores?.close();
    await database?.close();
    await db?.drop();
  });

  // Each is a value the store's own checks let through, refused by the
  // server: the answer is the request's fault (400), never an outage (503).
  const cases = [
    { name: "an amount beyond bigint", record: () => intentOf("too-big", { amount: 2n ** 63n }), message: refusedValueMessages.value },
    { name: "an amount the check constraint refuses", record: () => intentOf("zero", { amount: 0n }), message: refusedValueMessages.constraint },
    {
      name: "a time PostgreSQL cannot represent",
      record: () => intentOf("far-future", { expiresAt: new Date(8.64e15) }),
      message: refusedValueMessages.value,
    },
    { name: "a reference the check constraint refuses", record: () => intentOf("no spaces allowed"), message: refusedValueMessages.constraint },
  ];
  for (const c of cases) {
    it(`answers ${c.name} with InvalidArgument and writes nothing`, async () => {
      const record = c.record();
      await assertInvalid(stores.intents.insert(record), c.message);
      assert.equal(await stores.intents.findById("merchantA", record.id), undefined);
    });
  }

  it("prepares a statement again after a pipeline that prepared it failed, on the same connection", async () => {
    const single = await openMigratedStores(db.url, { poolMax: 1, migrate: false });
    try {
      assert.equal(single.settings.preparedStatements.usable, true, single.settings.preparedStatements.reason);
      for (let round = 0; round < 2; round++) {
        await assertInvalid(single.intents.insert(intentOf(`bad-${round}`, { amount: 0n })), refusedValueMessages.constraint);
        assert.equal((await single.intents.insert(intentOf(`good-${round}`))).inserted, true);
      }
    } finally {
      await single.close();
    }
  });

  it("answers a NUL that reaches PostgreSQL with InvalidArgument (the stores refuse it before sending)", async () => {
    await assertInvalid(database.run(true, [{ text: "select $1::text", values: ["a\u0000b"] }]), refusedValueMessages.text);
  });
});

describe("idempotent replays on PostgreSQL", { skip }, () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.drop();
  });

  /** Rolled-back transactions of the database so far, once every backend of it has ended (so has reported its counts). */
  async function rollbacks(): Promise<number> {
    for (let i = 0; i < 50; i++) {
      const { rows } = await adminQuery<{ n: string }>(
        "select count(*) as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [db.name],
      );
      if (rows[0]!.n === "0") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { rows } = await adminQuery<{ n: string }>("select xact_rollback as n from pg_stat_database where datname = $1", [db.name]);
    return Number(rows[0]!.n);
  }

  it("provoke no failing statement: replays, reference races, a registered account, a stored key", async () => {
    const setup = await openMigratedStores(db.url, { poolMax: 2 });
    await setup.apiKeys.ensureMerchant("merchantA", "A");
    await setup.close();
    const before = await rollbacks();

    const stores = await openMigratedStores(db.url, { poolMax: 5, migrate: false });
    try {
      const first = intentOf("replayed");
      assert.equal((await stores.intents.insert(first)).inserted, true);
      for (let i = 0; i < 10; i++) assert.equal((await stores.intents.insert({ ...first, id: ids.paymentIntentId(false) })).inserted, false);
      const race = await Promise.all(Array.from({ length: 20 }, () => stores.intents.insert(intentOf("raced"))));
      assert.equal(race.filter((r) => r.inserted).length, 1);
      const account = {
        livemode: false,
        id: ids.settlementAccountId(false),
        merchantId: "merchantA",
        accountName: "Shop",
        accountNumber: "0123456789",
        bankName: "Bank",
        bankCode: "058",
        createdAt: clock.now(),
        updatedAt: clock.now(),
      };
      assert.equal((await stores.accounts.insert(account, { maxPerMerchant: 5 })).inserted, true);
      assert.equal((await stores.accounts.insert({ ...account, id: ids.settlementAccountId(false) }, { maxPerMerchant: 5 })).inserted, false);
      const key = `sk_test_${randomBytes(32).toString("base64url")}`;
      await stores.apiKeys.addKey("merchantA", key);
      await stores.apiKeys.addKey("merchantA", key);
    } finally {
      await stores.close();
    }

    assert.equal((await rollbacks()) - before, 0, "a statement failed and rolled back (an ERROR in the server's log)");
    const { rows } = await queryDatabase<{ n: string }>(db.url, "select count(*) as n from payment_intents where client_reference in ('replayed', 'raced')");
    assert.equal(rows[0]!.n, "2");
  });
});
