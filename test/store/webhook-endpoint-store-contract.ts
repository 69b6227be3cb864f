import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { EventRecord } from "../../src/domain/event.js";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import type { WebhookEndpointRecord, WebhookEndpointStore } from "../../src/store/webhook-endpoint-store.js";
import { rotationOverlapMs } from "../../src/domain/signing-secrets.js";
import { at, contractMerchants, intentId, intentRecord, uuidLike } from "./contract-records.js";
import {
  createContractOutbox,
  deliveryId,
  farFuture,
  newEndpoint,
  type EventStoresHarness,
  type MakeEventStores,
} from "./event-contract-support.js";

const { a: merchantA, b: merchantB } = contractMerchants;

/**
 * describeWebhookEndpointStoreContract is the behaviour every
 * WebhookEndpointStore must have (store/webhook-endpoint-store.ts), run
 * against each store kind, with the DeliveryQueue of the same storage to see
 * what would be sent.
 */
export function describeWebhookEndpointStoreContract(name: string, makeStores: MakeEventStores): void {
  describe(`${name}: webhook endpoint store contract`, () => {
    let h: EventStoresHarness;
    let endpoints: WebhookEndpointStore;
    beforeEach(async () => {
      h = await makeStores(createContractOutbox().outbox);
      ({ endpoints } = h);
    });
    afterEach(() => h.close());

    async function create(overrides: Parameters<typeof newEndpoint>[0] = {}): Promise<WebhookEndpointRecord> {
      const result = await endpoints.create(newEndpoint(overrides), 100);
      assert.ok(result.created, "the endpoint was refused");
      return result.endpoint;
    }
    async function insert(n: number, overrides: Partial<PaymentIntentRecord> = {}): Promise<EventRecord> {
      const record = intentRecord({ id: intentId(n), clientReference: `order-${n}`, createdAt: at(n), ...overrides });
      assert.equal((await h.intents.insert(record)).inserted, true);
      const [event] = await h.events.list({ livemode: false, merchantId: record.merchantId, limit: 1, paymentIntentId: record.id });
      return event!;
    }
    const claimAll = (now = farFuture) => h.queue.claim({ now, owner: "contract", leaseMs: 60_000, limit: 100, perEndpointLimit: 100 });
    const deliveries = (endpointId: string, extra: { status?: "pending" | "succeeded" | "failed"; limit?: number; after?: { createdAt: Date; id: string } } = {}) =>
      endpoints.listDeliveries({ merchantId: merchantA, endpointId, limit: extra.limit ?? 100, status: extra.status, after: extra.after });

    it("registers an endpoint as enabled and shows it to its merchant only, never its secret", async () => {
      const input = newEndpoint({ eventTypes: ["payment_intent.succeeded", "payment_intent.failed"], description: "orders", createdAt: at(1) });
      const result = await endpoints.create(input, 10);
      const expected: WebhookEndpointRecord = {
        livemode: false,
        id: input.id,
        merchantId: merchantA,
        url: input.url,
        eventTypes: ["payment_intent.succeeded", "payment_intent.failed"],
        description: "orders",
        status: "enabled",
        disabledReason: null,
        createdAt: at(1),
        updatedAt: at(1),
      };
      assert.deepEqual(result, { created: true, endpoint: expected });
      assert.deepEqual(await endpoints.findById(merchantA, input.id), expected);
      assert.deepEqual(await endpoints.list(merchantA), [expected]);
      assert.equal(await endpoints.findById(merchantB, input.id), undefined);
      assert.deepEqual(await endpoints.list(merchantB), []);
      assert.ok(!JSON.stringify(await endpoints.list(merchantA)).includes(input.secret));
    });

    it("lists a merchant's endpoints oldest first", async () => {
      const second = await create({ createdAt: at(2) });
      const first = await create({ createdAt: at(1) });
      const third = await create({ createdAt: at(3) });
      await create({ merchantId: merchantB, createdAt: at(0) });
      assert.deepEqual(
        (await endpoints.list(merchantA)).map((e) => e.id),
        [first.id, second.id, third.id],
      );
    });

    it("refuses an endpoint past the merchant's cap, disabled ones counted, even when created at once", async () => {
      const results = await Promise.all(Array.from({ length: 6 }, () => endpoints.create(newEndpoint(), 3)));
      assert.equal(results.filter((r) => r.created).length, 3);
      assert.deepEqual(
        results.filter((r) => !r.created),
        [
          { created: false, reason: "limit" },
          { created: false, reason: "limit" },
          { created: false, reason: "limit" },
        ],
      );
      assert.equal((await endpoints.list(merchantA)).length, 3);
      assert.ok((await endpoints.create(newEndpoint({ merchantId: merchantB }), 3)).created, "the cap is per merchant");

      // Disable one (410 Gone): it still counts.
      const [first] = await endpoints.list(merchantA);
      await insert(1);
      const claimed = await claimAll();
      const ofFirst = claimed.find((c) => c.endpoint.id === first!.id)!;
      await h.queue.complete({
        lease: ofFirst.lease,
        attempt: { at: at(5), statusCode: 410, durationMs: 3, error: null },
        next: { status: "failed" },
        endpoint: { kind: "gone" },
      });
      assert.deepEqual(await endpoints.create(newEndpoint(), 3), { created: false, reason: "limit" });
      // A deleted one no longer counts.
      assert.equal(await endpoints.delete(merchantA, first!.id, at(6)), true);
      assert.ok((await endpoints.create(newEndpoint(), 3)).created);
    });

    it("shows an endpoint disabled by the delivery engine with its reason", async () => {
      const endpoint = await create();
      await insert(1);
      const [claimed] = await claimAll();
      await h.queue.complete({
        lease: claimed!.lease,
        attempt: { at: at(5), statusCode: 410, durationMs: 3, error: null },
        next: { status: "failed" },
        endpoint: { kind: "gone" },
      });
      const found = await endpoints.findById(merchantA, endpoint.id);
      assert.deepEqual([found?.status, found?.disabledReason], ["disabled", "gone"]);
    });

    it("deletes an endpoint: no longer listed, its pending deliveries failed, no new ones", async () => {
      const doomed = await create();
      const kept = await create();
      await insert(1);
      await insert(2);
      assert.equal(await endpoints.delete(merchantB, doomed.id, at(10)), false, "another merchant's endpoint is not deleted");
      assert.equal(await endpoints.delete(merchantA, `we_${uuidLike(999)}`, at(10)), false);
      assert.equal(await endpoints.delete(merchantA, doomed.id, at(10)), true);
      assert.equal(await endpoints.delete(merchantA, doomed.id, at(11)), false, "deleted once");
      assert.equal(await endpoints.findById(merchantA, doomed.id), undefined);
      assert.deepEqual(
        (await endpoints.list(merchantA)).map((e) => e.id),
        [kept.id],
      );
      assert.equal(await deliveries(doomed.id), undefined);
      assert.deepEqual(await endpoints.rotateSecret(merchantA, doomed.id, "whsec_bmV3", at(12), rotationOverlapMs), undefined);

      await insert(3);
      const claimed = await claimAll();
      assert.deepEqual(
        claimed.map((c) => c.endpoint.id),
        [kept.id, kept.id, kept.id],
      );
      assert.deepEqual(await h.queue.stats(farFuture), { pending: 3, due: 3, oldestPendingCreatedAt: at(1) });
    });

    it("rotates the secret: the new one first, the old one signing for 24 hours more", async () => {
      const input = newEndpoint({ createdAt: at(1) });
      await endpoints.create(input, 10);
      const rotated = await endpoints.rotateSecret(merchantA, input.id, "whsec_c2Vjb25kIHNlY3JldA==", at(100), rotationOverlapMs);
      assert.deepEqual([rotated?.id, rotated?.status, rotated?.updatedAt, rotated?.createdAt], [input.id, "enabled", at(100), at(1)]);
      assert.equal(await endpoints.rotateSecret(merchantB, input.id, "whsec_b3RoZXI=", at(101), rotationOverlapMs), undefined);
      await insert(1);
      const [claimed] = await claimAll();
      assert.deepEqual(claimed!.endpoint.secrets, [
        { secret: "whsec_c2Vjb25kIHNlY3JldA==", expiresAt: null },
        { secret: input.secret, expiresAt: new Date(at(100).getTime() + rotationOverlapMs) },
      ]);
    });

    it("keeps at most two secrets: a rotation ends the older grace, and a grace of 0 retires the replaced secret at once", async () => {
      const input = newEndpoint({ createdAt: at(1) });
      await endpoints.create(input, 10);
      await endpoints.rotateSecret(merchantA, input.id, "whsec_Yg==", at(100), rotationOverlapMs);
      await endpoints.rotateSecret(merchantA, input.id, "whsec_Yw==", at(200), 60_000);
      await insert(1);
      const [first] = await claimAll();
      assert.deepEqual(first!.endpoint.secrets, [
        { secret: "whsec_Yw==", expiresAt: null },
        { secret: "whsec_Yg==", expiresAt: new Date(at(200).getTime() + 60_000) },
      ]);
      await h.queue.release([first!.lease]);
      await endpoints.rotateSecret(merchantA, input.id, "whsec_ZA==", at(300), 0);
      const [second] = await claimAll();
      assert.deepEqual(second!.endpoint.secrets, [{ secret: "whsec_ZA==", expiresAt: null }]);
    });

    it("lists an endpoint's deliveries newest first in keyset pages, filtered by status, with their attempts", async () => {
      const endpoint = await create();
      const events = [await insert(1), await insert(2), await insert(3, { createdAt: at(2) })];
      const listed = (await deliveries(endpoint.id))!;
      assert.equal(listed.length, 3);
      assert.deepEqual(
        listed.map((d) => d.createdAt),
        [at(2), at(2), at(1)],
      );
      // Two at the same time: the larger id first.
      assert.ok(listed[0]!.createdAt.getTime() === listed[1]!.createdAt.getTime() && listed[0]!.id > listed[1]!.id);
      assert.deepEqual(new Set(listed.map((d) => d.eventId)), new Set(events.map((e) => e.id)));

      const page1 = (await deliveries(endpoint.id, { limit: 2 }))!;
      const page2 = (await deliveries(endpoint.id, { limit: 2, after: page1.at(-1)! }))!;
      assert.deepEqual(
        [...page1, ...page2].map((d) => d.id),
        listed.map((d) => d.id),
      );

      const claimed = await claimAll();
      const target = claimed.find((c) => c.deliveryId === listed[2]!.id)!;
      await h.queue.complete({
        lease: target.lease,
        attempt: { at: at(50), statusCode: 200, durationMs: 12, error: null },
        next: { status: "succeeded" },
        endpoint: { kind: "succeeded" },
      });
      await h.queue.release(claimed.filter((c) => c !== target).map((c) => c.lease));
      const succeeded = (await deliveries(endpoint.id, { status: "succeeded" }))!;
      assert.deepEqual(
        succeeded.map((d) => [d.id, d.status, d.nextAttemptAt, d.updatedAt, d.attempts]),
        [[listed[2]!.id, "succeeded", null, at(50), [{ at: at(50), statusCode: 200, durationMs: 12, error: null }]]],
      );
      assert.deepEqual(
        (await deliveries(endpoint.id, { status: "pending" }))!.map((d) => d.id),
        listed.slice(0, 2).map((d) => d.id),
      );
      assert.deepEqual(await deliveries(endpoint.id, { status: "failed" }), []);
      assert.equal(await endpoints.listDeliveries({ merchantId: merchantB, endpointId: endpoint.id, limit: 10 }), undefined);
      assert.equal(await deliveries(`we_${uuidLike(999)}`), undefined);
    });

    it("redelivers an event to every enabled endpoint taking it, or to one named endpoint", async () => {
      const every = await create();
      const succeededOnly = await create({ eventTypes: ["payment_intent.succeeded"] });
      const disabled = await create();
      const ofB = await create({ merchantId: merchantB });
      const event = await insert(1);
      const claimed = await claimAll();
      const ofDisabled = claimed.find((c) => c.endpoint.id === disabled.id)!;
      await h.queue.complete({
        lease: ofDisabled.lease,
        attempt: { at: at(5), statusCode: 410, durationMs: 3, error: null },
        next: { status: "failed" },
        endpoint: { kind: "gone" },
      });
      for (const c of claimed.filter((c) => c !== ofDisabled)) {
        await h.queue.complete({
          lease: c.lease,
          attempt: { at: at(5), statusCode: 204, durationMs: 3, error: null },
          next: { status: "succeeded" },
          endpoint: { kind: "succeeded" },
        });
      }

      const all = await endpoints.redeliver({ merchantId: merchantA, eventId: event.id, at: at(100), deliveryId });
      assert.equal(all.kind, "queued");
      assert.deepEqual(
        all.kind === "queued" && all.deliveries.map((d) => [d.eventId, d.eventType, d.endpointId, d.status, d.attempts, d.nextAttemptAt, d.createdAt]),
        [[event.id, "payment_intent.created", every.id, "pending", [], at(100), at(100)]],
      );
      const again = await claimAll(at(100));
      assert.deepEqual(
        again.map((c) => [c.eventId, c.endpoint.id, c.body, c.attemptsMade]),
        [[event.id, every.id, event.body, 0]],
      );
      await h.queue.release(again.map((c) => c.lease));

      // A named endpoint gets it even when its filter leaves the type out: the merchant asked for it.
      const named = await endpoints.redeliver({ merchantId: merchantA, eventId: event.id, endpointId: succeededOnly.id, at: at(101), deliveryId });
      assert.deepEqual(
        named.kind === "queued" && named.deliveries.map((d) => [d.eventId, d.endpointId, d.status, d.createdAt]),
        [[event.id, succeededOnly.id, "pending", at(101)]],
      );
      assert.deepEqual(
        (await deliveries(succeededOnly.id))!.map((d) => d.eventId),
        [event.id],
      );

      assert.deepEqual(await endpoints.redeliver({ merchantId: merchantA, eventId: event.id, endpointId: disabled.id, at: at(102), deliveryId }), {
        kind: "endpoint-disabled",
      });
      assert.deepEqual(await endpoints.redeliver({ merchantId: merchantA, eventId: event.id, endpointId: ofB.id, at: at(102), deliveryId }), {
        kind: "no-endpoint",
      });
      assert.deepEqual(await endpoints.redeliver({ merchantId: merchantB, eventId: event.id, at: at(102), deliveryId }), { kind: "no-event" });
      assert.deepEqual(await endpoints.redeliver({ merchantId: merchantA, eventId: `evt_${uuidLike(999)}`, at: at(102), deliveryId }), {
        kind: "no-event",
      });
      assert.deepEqual(await endpoints.listDeliveries({ merchantId: merchantB, endpointId: ofB.id, limit: 10 }), []);
    });
  });
}
