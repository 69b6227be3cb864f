import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import type { EventType } from "../../src/domain/event.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import type { NewWebhookEndpoint } from "../../src/store/webhook-endpoint-store.js";
import { createSecretBox } from "../../src/lib/secret-box.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";

const skip = await postgresUnavailable();

const merchantId = "mer_hooks";
const t0 = Date.parse("2026-06-01T10:00:00.000Z");
const at = (ms: number) => new Date(t0 + ms);
const secretBox = createSecretBox({ key: Buffer.alloc(32, 9) });
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("PostgresWebhookEndpointStore", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  let n = 0;

  const query = <R extends Record<string, unknown>>(sql: string, params: unknown[] = []) => queryDatabase<R>(db.url, sql, params);
  const endpointOf = (overrides: Partial<NewWebhookEndpoint> = {}): NewWebhookEndpoint => {
    n += 1;
    return {
      livemode: false,
      id: `we_${String(n).padStart(4, "0")}`,
      merchantId,
      url: `https://hooks${n}.example.com/in`,
      eventTypes: [],
      description: null,
      secret,
      createdAt: at(n * 1000),
      ...overrides,
    };
  };
  async function insertEvent(id: string, type: EventType = "payment_intent.created") {
    await query(
      `insert into events (merchant_id, id, type, payment_intent_id, created_at, payload, body) values ($1, $2, $3, 'pi_1', $4, '\\x00', '{}')`,
      [merchantId, id, type, at(0)],
    );
  }
  const claimAll = () => stores.deliveryQueue.claim({ now: at(10 ** 9), owner: "test", leaseMs: 60_000, limit: 100, perEndpointLimit: 100 });

  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url, { poolMax: 12, secretBox });
    await stores.apiKeys.ensureMerchant(merchantId, "Hooks");
    await stores.apiKeys.ensureMerchant("mer_other", "Other");
  });
  after(async () => {
    await stores?.close();
    await db?.drop();
  });
  beforeEach(() => query("truncate webhook_deliveries, webhook_endpoints, events"));

  it("registers, lists oldest first, finds, and keeps each merchant's own", async () => {
    const a = endpointOf({ eventTypes: ["payment_intent.succeeded", "payment_intent.failed"], description: "orders" });
    const b = endpointOf();
    const created = await stores.endpoints.create(a, 5);
    assert.deepEqual(created, {
      created: true,
      endpoint: {
        id: a.id,
        merchantId,
        url: a.url,
        eventTypes: a.eventTypes,
        description: "orders",
        status: "enabled",
        disabledReason: null,
        createdAt: a.createdAt,
        updatedAt: a.createdAt,
        livemode: false,
      },
    });
    await stores.endpoints.create(b, 5);
    assert.deepEqual((await stores.endpoints.list(merchantId)).map((e) => e.id), [a.id, b.id]);
    assert.equal((await stores.endpoints.findById(merchantId, b.id))?.url, b.url);
    assert.equal(await stores.endpoints.findById("mer_other", b.id), undefined);
    assert.deepEqual(await stores.endpoints.list("mer_other"), []);
  });

  it("never passes the cap, even with concurrent registrations; deleted endpoints do not count", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => stores.endpoints.create(endpointOf(), 3)));
    assert.equal(results.filter((r) => r.created).length, 3);
    assert.ok(results.filter((r) => !r.created).every((r) => !r.created && r.reason === "limit"));
    const [first] = await stores.endpoints.list(merchantId);
    assert.equal(await stores.endpoints.delete(merchantId, first!.id, at(99_000)), true);
    assert.equal((await stores.endpoints.create(endpointOf(), 3)).created, true);
    assert.equal((await stores.endpoints.create(endpointOf(), 3)).created, false);
  });

  it("stores secrets sealed and bound to the endpoint; rotation keeps the old one for 24 hours", async () => {
    const e = endpointOf();
    await stores.endpoints.create(e, 5);
    const { rows } = await query<{ secrets: string }>("select secrets::text as secrets from webhook_endpoints where id = $1", [e.id]);
    assert.ok(!rows[0]!.secrets.includes(secret.slice(6)), "no secret in the clear");
    assert.match(rows[0]!.secrets, /"v1:/);

    const rotated = await stores.endpoints.rotateSecret(merchantId, e.id, "whsec_bmV3", at(500_000), 86_400_000);
    assert.equal(rotated?.updatedAt.getTime(), at(500_000).getTime());
    assert.equal(await stores.endpoints.rotateSecret("mer_other", e.id, "whsec_bmV3", at(500_000), 86_400_000), undefined);
    await insertEvent("evt_1");
    await query(
      `insert into webhook_deliveries (merchant_id, id, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
       values ($1, 'whd_1', 'evt_1', $2, 'pending', $3, $3, $3)`,
      [merchantId, e.id, at(0)],
    );
    const [claimed] = await claimAll();
    assert.deepEqual(claimed!.endpoint.secrets, [
      { secret: "whsec_bmV3", expiresAt: null },
      { secret, expiresAt: at(500_000 + 86_400_000) },
    ]);
  });

  it("deletes: no longer listed or found, idle pending deliveries failed, those in flight left to complete", async () => {
    const e = endpointOf();
    await stores.endpoints.create(e, 5);
    await insertEvent("evt_1");
    await insertEvent("evt_2");
    const deliver = (id: string, eventId: string, due: Date) =>
      query(
        `insert into webhook_deliveries (merchant_id, id, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
         values ($1, $2, $3, $4, 'pending', $5, $5, $5)`,
        [merchantId, id, eventId, e.id, due],
      );
    await deliver("whd_flight", "evt_1", at(0));
    const [inFlight] = await claimAll();
    await deliver("whd_idle", "evt_2", at(0));
    assert.equal(await stores.endpoints.delete(merchantId, e.id, at(1000)), true);
    assert.equal(await stores.endpoints.delete(merchantId, e.id, at(1000)), false);
    assert.equal(await stores.endpoints.findById(merchantId, e.id), undefined);
    assert.deepEqual(await stores.endpoints.list(merchantId), []);
    const status = async (id: string) => (await query<{ status: string }>("select status from webhook_deliveries where id = $1", [id])).rows[0]!.status;
    assert.equal(await status("whd_idle"), "failed");
    assert.equal(await status("whd_flight"), "pending");
    const done = await stores.deliveryQueue.complete({
      lease: inFlight!.lease,
      attempt: { at: at(2000), statusCode: 500, durationMs: 3, error: null },
      next: { status: "pending", nextAttemptAt: at(9000) },
      endpoint: { kind: "failed", at: at(2000), disableIfFailingSince: at(-5 * 86_400_000) },
    });
    assert.deepEqual(done, { recorded: true, status: "failed", endpointDisabled: null, otherDeliveriesFailed: 0 });
    assert.deepEqual(await claimAll(), []);
    assert.equal(await stores.endpoints.listDeliveries({ merchantId, endpointId: e.id, limit: 10 }), undefined);
  });

  it("lists an endpoint's deliveries newest first with their attempts and event type, by status and page", async () => {
    const e = endpointOf();
    await stores.endpoints.create(e, 5);
    for (let i = 1; i <= 3; i++) {
      await insertEvent(`evt_${i}`, i === 2 ? "payment_intent.succeeded" : "payment_intent.created");
      await query(
        `insert into webhook_deliveries (merchant_id, id, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
         values ($1, $2, $3, $4, 'pending', $5, $5, $5)`,
        [merchantId, `whd_${i}`, `evt_${i}`, e.id, at(i * 1000)],
      );
    }
    const claimed = (await claimAll()).find((c) => c.deliveryId === "whd_2")!;
    const attempt = { at: at(5000), statusCode: 200, durationMs: 12, error: null };
    await stores.deliveryQueue.complete({ lease: claimed.lease, attempt, next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });

    const page = await stores.endpoints.listDeliveries({ merchantId, endpointId: e.id, limit: 2 });
    assert.deepEqual(page?.map((d) => d.id), ["whd_3", "whd_2"]);
    assert.deepEqual(page![1], {
      id: "whd_2",
      eventId: "evt_2",
      eventType: "payment_intent.succeeded",
      endpointId: e.id,
      status: "succeeded",
      attempts: [attempt],
      nextAttemptAt: null,
      createdAt: at(2000),
      updatedAt: at(5000),
    });
    const next = await stores.endpoints.listDeliveries({ merchantId, endpointId: e.id, limit: 2, after: { createdAt: at(2000), id: "whd_2" } });
    assert.deepEqual(next?.map((d) => d.id), ["whd_1"]);
    const succeeded = await stores.endpoints.listDeliveries({ merchantId, endpointId: e.id, limit: 10, status: "succeeded" });
    assert.deepEqual(succeeded?.map((d) => d.id), ["whd_2"]);
    assert.equal(await stores.endpoints.listDeliveries({ merchantId: "mer_other", endpointId: e.id, limit: 10 }), undefined);
  });

  it("redelivers an event to every enabled endpoint taking its type, or to one", async () => {
    const all = endpointOf();
    const succeededOnly = endpointOf({ eventTypes: ["payment_intent.succeeded"] });
    const disabled = endpointOf();
    for (const e of [all, succeededOnly, disabled]) await stores.endpoints.create(e, 5);
    await query("update webhook_endpoints set status = 'disabled', disabled_reason = 'gone' where id = $1", [disabled.id]);
    await insertEvent("evt_1");
    let k = 0;
    const deliveryId = () => `whd_re_${++k}`;

    const toAll = await stores.endpoints.redeliver({ merchantId, eventId: "evt_1", at: at(7000), deliveryId });
    assert.equal(toAll.kind, "queued");
    assert.deepEqual(
      toAll.kind === "queued" && toAll.deliveries.map((d) => [d.endpointId, d.status, d.eventType, d.nextAttemptAt?.getTime()]),
      [[all.id, "pending", "payment_intent.created", at(7000).getTime()]],
    );
    const toOne = await stores.endpoints.redeliver({ merchantId, eventId: "evt_1", endpointId: succeededOnly.id, at: at(8000), deliveryId });
    assert.deepEqual(toOne.kind === "queued" && toOne.deliveries.map((d) => d.endpointId), [succeededOnly.id]);
    assert.deepEqual(await stores.endpoints.redeliver({ merchantId, eventId: "evt_1", endpointId: disabled.id, at: at(8000), deliveryId }), {
      kind: "endpoint-disabled",
    });
    assert.deepEqual(await stores.endpoints.redeliver({ merchantId, eventId: "evt_1", endpointId: "we_none", at: at(8000), deliveryId }), {
      kind: "no-endpoint",
    });
    assert.deepEqual(await stores.endpoints.redeliver({ merchantId, eventId: "evt_none", at: at(8000), deliveryId }), { kind: "no-event" });
    assert.deepEqual(await stores.endpoints.redeliver({ merchantId: "mer_other", eventId: "evt_1", at: at(8000), deliveryId }), {
      kind: "no-event",
    });
    await insertEvent("evt_2", "payment_intent.failed");
    await stores.endpoints.delete(merchantId, all.id, at(9000));
    assert.deepEqual(await stores.endpoints.redeliver({ merchantId, eventId: "evt_2", at: at(9000), deliveryId }), { kind: "no-endpoint" });
  });
});
