import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { newApiKey } from "../../src/auth/api-key-format.js";
import type { ApiKeyStore, NewApiKey } from "../../src/store/api-key-store.js";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { contractMerchants } from "./contract-records.js";

const { a: merchantA, b: merchantB } = contractMerchants;

/** What one contract test runs on: a key store over empty storage, on the given clock. */
export interface ApiKeyStoreHarness {
  keys: ApiKeyStore;
  close(): Promise<void>;
}
export type MakeApiKeyStore = (clock: ManualClock) => Promise<ApiKeyStoreHarness>;

const start = "2026-12-01T10:00:00.000Z";
const later = (ms: number) => new Date(new Date(start).getTime() + ms);

/**
 * describeApiKeyStoreContract is the behaviour every ApiKeyStore must have
 * (store/api-key-store.ts), run against each store kind: keys of the API and
 * of today's formats, expiry by the store's clock, rolls, revocation scoped
 * to the merchant, lastUsedAt only forward.
 */
export function describeApiKeyStoreContract(name: string, makeStore: MakeApiKeyStore): void {
  describe(`${name}: API key store contract`, () => {
    let h: ApiKeyStoreHarness;
    let keys: ApiKeyStore;
    let clock: ManualClock;
    beforeEach(async () => {
      clock = createManualClock(start);
      h = await makeStore(clock);
      ({ keys } = h);
    });
    afterEach(() => h.close());

    const newKey = (overrides: Partial<NewApiKey> = {}): NewApiKey => ({
      merchantId: merchantA,
      key: newApiKey(overrides.mode ?? "test"),
      mode: "test",
      name: "backend",
      scopes: ["payment_intents:read", "refunds:write"],
      allowedCidrs: ["203.0.113.0/24", "2001:db8::/32"],
      expiresAt: null,
      ...overrides,
    });

    it("stores a key made through the API and verifies it to its merchant, mode, scopes and networks", async () => {
      const input = newKey({ expiresAt: later(3_600_000) });
      const record = await keys.createKey(input);
      assert.match(record.id, /^key_/);
      assert.deepEqual(record, {
        id: record.id,
        merchantId: merchantA,
        mode: "test",
        name: "backend",
        scopes: ["payment_intents:read", "refunds:write"],
        allowedCidrs: ["203.0.113.0/24", "2001:db8::/32"],
        keyPrefix: input.key.slice(0, 12),
        last4: input.key.slice(-4),
        createdAt: new Date(start),
        lastUsedAt: null,
        expiresAt: later(3_600_000),
        revokedAt: null,
      });
      const principal = await keys.verify(input.key);
      assert.deepEqual(principal && { ...principal, merchantName: undefined }, {
        merchantId: merchantA,
        merchantName: undefined,
        livemode: false,
        keyId: record.id,
        scopes: ["payment_intents:read", "refunds:write"],
        allowedCidrs: ["203.0.113.0/24", "2001:db8::/32"],
        expiresAt: later(3_600_000),
      });
      assert.equal(await keys.verify(newApiKey("test")), undefined);
    });

    it("keeps keys of today's formats working unchanged: every scope, anywhere, mode from the prefix", async () => {
      const old = `sk_test_${Buffer.alloc(24, 7).toString("base64url")}`;
      const live = newApiKey("live");
      const stored = await keys.addKey(merchantA, old);
      assert.deepEqual(await keys.addKey(merchantA, old), stored, "storing it again is a no-op");
      await keys.addKey(merchantA, live);
      assert.deepEqual(
        [await keys.verify(old), await keys.verify(live)].map((p) => p && [p.livemode, p.scopes, p.allowedCidrs, p.expiresAt]),
        [[false, [], [], null], [true, [], [], null]],
      );
      await assert.rejects(keys.addKey(merchantB, old), /belongs to another merchant/);
      assert.deepEqual((await keys.listMerchantKeys(merchantA, ["live"])).map((k) => [k.mode, k.name, k.scopes]), [["live", "", []]]);
    });

    it("lists a merchant's unrevoked keys of the given modes, oldest first, expired ones included", async () => {
      const first = await keys.createKey(newKey({ name: "first" }));
      clock.advance(1000);
      const live = await keys.createKey(newKey({ name: "live", mode: "live" }));
      clock.advance(1000);
      const expiring = await keys.createKey(newKey({ name: "expiring", expiresAt: later(5000) }));
      const revoked = await keys.createKey(newKey({ name: "revoked" }));
      await keys.createKey(newKey({ merchantId: merchantB, name: "B's" }));
      assert.ok(await keys.revokeMerchantKey(merchantA, revoked.id));
      clock.advance(10_000);
      const names = async (modes: ("test" | "live")[]) => (await keys.listMerchantKeys(merchantA, modes)).map((k) => k.name);
      assert.deepEqual(await names(["test"]), ["first", "expiring"]);
      assert.deepEqual(await names(["test", "live"]), ["first", "live", "expiring"]);
      assert.deepEqual((await keys.findKey(merchantA, first.id))?.name, "first");
      assert.equal(await keys.findKey(merchantB, first.id), undefined, "another merchant's key is not found");
      assert.equal(await keys.findKey(merchantA, revoked.id), undefined);
      assert.equal((await keys.findKey(merchantA, expiring.id))?.expiresAt?.getTime(), later(5000).getTime());
      assert.equal(live.mode, "live");
    });

    it("refuses a key at its expiry, by the store's clock", async () => {
      const input = newKey({ expiresAt: later(60_000) });
      await keys.createKey(input);
      clock.advance(59_999);
      assert.ok(await keys.verify(input.key));
      clock.advance(1);
      assert.equal(await keys.verify(input.key), undefined);
      assert.equal(await (keys.recheck ?? keys.verify)(input.key), undefined);
    });

    it("rolls a key: the old one ends at the grace's end (or sooner, as it was), its successor copies it", async () => {
      const input = newKey({ expiresAt: later(86_400_000) });
      const old = await keys.createKey(input);
      const successor = newApiKey("test");
      const rolled = await keys.rollKey(merchantA, old.id, successor, later(60_000));
      assert.ok(rolled);
      assert.equal(rolled.old.expiresAt?.getTime(), later(60_000).getTime());
      assert.deepEqual(
        { ...rolled.created, id: undefined },
        { ...old, id: undefined, keyPrefix: successor.slice(0, 12), last4: successor.slice(-4), expiresAt: later(86_400_000) },
      );
      assert.deepEqual([Boolean(await keys.verify(input.key)), Boolean(await keys.verify(successor))], [true, true]);
      clock.advance(60_000);
      assert.deepEqual([Boolean(await keys.verify(input.key)), Boolean(await keys.verify(successor))], [false, true]);
      // An expired key, another merchant's or an unknown one is not rolled.
      assert.equal(await keys.rollKey(merchantA, old.id, newApiKey("test"), later(120_000)), undefined);
      assert.equal(await keys.rollKey(merchantB, rolled.created.id, newApiKey("test"), later(120_000)), undefined);
      // A grace past the key's own expiry leaves the expiry as it was.
      const soon = await keys.createKey(newKey({ expiresAt: later(90_000) }));
      const again = await keys.rollKey(merchantA, soon.id, newApiKey("test"), later(3_600_000));
      assert.equal(again?.old.expiresAt?.getTime(), later(90_000).getTime());
    });

    it("revokes only the merchant's own key, once; the key stops verifying at once here", async () => {
      const input = newKey();
      const record = await keys.createKey(input);
      assert.ok(await keys.verify(input.key));
      assert.equal(await keys.revokeMerchantKey(merchantB, record.id), undefined);
      assert.ok(await keys.verify(input.key));
      const revoked = await keys.revokeMerchantKey(merchantA, record.id);
      assert.equal(revoked?.revokedAt?.getTime(), new Date(start).getTime());
      assert.equal(await keys.verify(input.key), undefined);
      assert.equal(await keys.revokeMerchantKey(merchantA, record.id), undefined);
    });

    it("moves lastUsedAt only forward, for the merchant's own key", async () => {
      const record = await keys.createKey(newKey());
      await keys.markUsed(merchantA, record.id, later(120_000));
      await keys.markUsed(merchantA, record.id, later(60_000));
      await keys.markUsed(merchantB, record.id, later(180_000));
      assert.equal((await keys.findKey(merchantA, record.id))?.lastUsedAt?.getTime(), later(120_000).getTime());
    });
  });
}
