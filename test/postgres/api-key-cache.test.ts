import assert from "node:assert/strict";
import type { Principal } from "../../src/domain/principal.js";
import { after, before, describe, it } from "node:test";
import { hashApiKey } from "../../src/auth/hash-api-key.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createManualClock } from "../support/manual-clock.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { createStatementCapture, type StatementCapture } from "./support/statement-capture.js";


/** The merchant and mode a verified key is for (its id, scopes and networks are the key contract's). */
const who = (p: Principal | undefined) => p && { merchantId: p.merchantId, merchantName: p.merchantName, livemode: p.livemode };
const skip = await postgresUnavailable();

describe("PostgreSQL API key verification cache", { skip }, () => {
  let db: TestDatabase;
  let capture: StatementCapture;
  let stores: PostgresStores;
  const clock = createManualClock("2026-03-01T10:00:00.000Z");
  /** Statements the stores have executed so far (Bind messages through the capturing proxy). */
  const sent = () => capture.binds;

  before(async () => {
    db = await createTestDatabase();
    await (await openMigratedStores(db.url, { poolMax: 1 })).close();
    const direct = new URL(db.url);
    capture = await createStatementCapture({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaCapture = new URL(db.url);
    viaCapture.port = String(capture.port);
    stores = await openMigratedStores(viaCapture.toString(), { poolMax: 2, clock, migrate: false });
    await stores.apiKeys.ensureMerchant("merchantA", "Merchant A");
  });
  after(async () => {
    await stores?.close();
    await capture?.close();
    await db?.drop();
  });

  /** Stores a key behind the store's back, as another instance would. */
  async function storeElsewhere(key: string): Promise<void> {
    await queryDatabase(db.url, "insert into api_keys (id, merchant_id, key_hash, key_prefix) values ($1, 'merchantA', $2, $3)", [
      `key_${key.slice(-8)}`,
      hashApiKey(key).toString("hex"),
      key.slice(0, 12),
    ]);
  }

  it("answers a flood of one unknown key with one query, then asks again after 5 seconds", async () => {
    const key = "sk_test_unknown_until_later_0001";
    const before = sent();
    for (let i = 0; i < 100; i++) assert.equal(await stores.apiKeys.verify(key), undefined);
    assert.equal(sent() - before, 2, "one round trip: the deadline and the lookup");

    await storeElsewhere(key);
    clock.advance(4_999);
    assert.equal(await stores.apiKeys.verify(key), undefined, "still remembered as unknown");
    clock.advance(2);
    assert.deepEqual(who(await stores.apiKeys.verify(key)), { merchantId: "merchantA", merchantName: "Merchant A", livemode: false });
  });

  it("rechecks a cached key in the database: a key revoked elsewhere is refused at once, and leaves the cache", async () => {
    const key = "sk_test_revoked_elsewhere_0003";
    await storeElsewhere(key);
    const merchant = { merchantId: "merchantA", merchantName: "Merchant A", livemode: false };
    assert.deepEqual(who(await stores.apiKeys.verify(key)), merchant);
    assert.deepEqual(who(await stores.apiKeys.recheck!(key)), merchant, "still valid");
    await queryDatabase(db.url, "update api_keys set revoked_at = now() where key_hash = $1", [hashApiKey(key).toString("hex")]);
    assert.deepEqual(who(await stores.apiKeys.verify(key)), merchant, "the cache still holds it");
    const before = sent();
    assert.equal(await stores.apiKeys.recheck!(key), undefined);
    assert.equal(sent() - before, 2, "one round trip, whatever the cache holds");
    assert.equal(await stores.apiKeys.verify(key), undefined, "gone from the cache too");
  });

  it("knows at once a key added through this store, even one it had seen as unknown", async () => {
    const key = "sk_test_added_here_after_a_miss_02";
    assert.equal(await stores.apiKeys.verify(key), undefined);
    await stores.apiKeys.addKey("merchantA", key);
    assert.deepEqual(who(await stores.apiKeys.verify(key)), { merchantId: "merchantA", merchantName: "Merchant A", livemode: false });
  });

  it("keeps verifying a known key without a query for 10 seconds", async () => {
    const key = "sk_test_known_and_cached_key_003";
    await stores.apiKeys.addKey("merchantA", key);
    assert.ok(await stores.apiKeys.verify(key));
    const before = sent();
    for (let i = 0; i < 50; i++) assert.ok(await stores.apiKeys.verify(key));
    assert.equal(sent(), before);
  });
});
