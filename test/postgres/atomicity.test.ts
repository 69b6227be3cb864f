import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { createLiveIntents } from "./support/live-intents.js";

const skip = await postgresUnavailable();

const clock = createSystemClock();
const ids = createIdGenerator(clock);
const liveIntent = createLiveIntents(clock, ids);

const intentOf = (merchantId: string, clientReference: string, settlementAccountIds: string[]) =>
  liveIntent({
    merchantId,
    clientReference,
    paymentMethods: ["card", "bank_transfer", "ussd"],
    splits: settlementAccountIds.map((settlementAccountId) => ({ settlementAccountId, splitAmount: 1000n })),
  });

describe("PostgreSQL payment intent insert is one transaction", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  let ownAccountId: string;
  let foreignAccountId: string;

  const rowsOf = async (intentId: string) => {
    const { rows } = await queryDatabase<{ intents: string; methods: string; splits: string }>(
      db.url,
      `select (select count(*) from payment_intents where id = $1) as intents,
              (select coalesce(sum(cardinality(payment_methods)), 0) from payment_intents where id = $1) as methods,
              (select count(*) from payment_intent_splits where payment_intent_id = $1) as splits`,
      [intentId],
    );
    return rows[0];
  };

  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url, { poolMax: 4, clock });
    await stores.apiKeys.ensureMerchant("merchantA", "A");
    await stores.apiKeys.ensureMerchant("merchantB", "B");
    const account = (merchantId: string, accountNumber: string) => ({
      livemode: false,
      id: ids.settlementAccountId(false),
      merchantId,
      accountName: "Shop",
      accountNumber,
      bankName: "Test Bank",
      bankCode: "058",
      createdAt: clock.now(),
      updatedAt: clock.now(),
    });
    const own = await stores.accounts.insert(account("merchantA", "1000000001"), { maxPerMerchant: 10 });
    const foreign = await stores.accounts.insert(account("merchantB", "1000000002"), { maxPerMerchant: 10 });
    assert.ok(own.inserted && foreign.inserted);
    ownAccountId = own.record.id;
    foreignAccountId = foreign.record.id;
  });
  after(async () => {
    await stores?.close();
    await db?.drop();
  });

  const cases = [
    { name: "an account that does not exist", accounts: () => [ownAccountId, "sa_does-not-exist"] },
    { name: "another merchant's account", accounts: () => [ownAccountId, foreignAccountId] },
  ];
  for (const c of cases) {
    it(`writes nothing when a split names ${c.name}`, async () => {
      const record = intentOf("merchantA", `atomic-${c.name.replace(/\W+/g, "-")}`, c.accounts());
      // The foreign key fails on the split, after the intent was written by
      // the same statement: all of it must roll back. A value the database
      // refuses is the request's fault (400), never an outage (503).
      await assert.rejects(stores.intents.insert(record), (error: unknown) => {
        assert.ok(error instanceof ConnectError);
        assert.equal(error.code, Code.InvalidArgument);
        assert.equal(error.rawMessage, "the request conflicts with a rule of the stored data");
        return true;
      });
      assert.deepEqual({ ...(await rowsOf(record.id)) }, { intents: "0", methods: "0", splits: "0" });
      assert.equal(await stores.intents.findById("merchantA", record.id), undefined);
      // The reference stays free: a good insert with it now succeeds.
      const retry = await stores.intents.insert({ ...record, id: ids.paymentIntentId(false), splits: [record.splits[0]!] });
      assert.equal(retry.inserted, true);
      const retried = retry.inserted ? retry.record.id : "";
      assert.deepEqual({ ...(await rowsOf(retried)) }, { intents: "1", methods: "3", splits: "1" });
    });
  }
});
