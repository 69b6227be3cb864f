import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { EventType } from "../../src/domain/event.js";
import type { PaymentAttemptRecord } from "../../src/domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import type { WebhookEndpointRecord } from "../../src/store/webhook-endpoint-store.js";
import { accountRecord, at, contractMerchants, intentId, intentRecord, unlimited, uuidLike } from "./contract-records.js";
import {
  createContractOutbox,
  farFuture,
  newEndpoint,
  readAll,
  successOf,
  type ContractOutbox,
  type EventStoresHarness,
  type MakeEventStores,
} from "./event-contract-support.js";

const { a: merchantA, b: merchantB } = contractMerchants;

/**
 * describeEventOutboxContract is how every PaymentIntentStore must record
 * events (EventOutbox, store/event-store.ts): each change that eventTypeOf
 * names records exactly that event, rendered as the intent was right after
 * the change, with one due delivery per enabled endpoint of the merchant
 * taking its type, and tells the outbox after the commit; a replay, a no-op
 * or a rolled-back change records nothing.
 */
export function describeEventOutboxContract(name: string, makeStores: MakeEventStores): void {
  describe(`${name}: event outbox contract`, () => {
    let h: EventStoresHarness;
    let o: ContractOutbox;
    beforeEach(async () => {
      o = createContractOutbox();
      h = await makeStores(o.outbox);
    });
    afterEach(() => h.close());

    async function insert(n: number, overrides: Partial<PaymentIntentRecord> = {}): Promise<PaymentIntentRecord> {
      const record = intentRecord({ id: intentId(n), clientReference: `order-${n}`, createdAt: at(n), ...overrides });
      assert.equal((await h.intents.insert(record)).inserted, true);
      return record;
    }
    async function endpoint(overrides: Parameters<typeof newEndpoint>[0] = {}): Promise<WebhookEndpointRecord> {
      const result = await h.endpoints.create(newEndpoint(overrides), 100);
      assert.ok(result.created);
      return result.endpoint;
    }
    const deliveriesOf = async (endpointId: string, merchantId: string = merchantA) =>
      (await h.endpoints.listDeliveries({ merchantId, endpointId, limit: 100 }))!;
    const attempt = (record: PaymentIntentRecord, n: number, outcome: "declined" | "succeeded", createdAt: Date): PaymentAttemptRecord => ({
      id: `pa_${uuidLike(n)}`,
      paymentIntentId: record.id,
      merchantId: record.merchantId,
      amount: record.amount,
      method: "card",
      outcome,
      processorReference: `ref_${n}`,
      processor: "test",
      idempotencyKey: `pa_${uuidLike(n)}`,
      nextActionUrl: null,
      lateSuccess: null,
      declineReason: outcome === "declined" ? "The card was declined by its issuer." : null,
      createdAt,
      settledAt: createdAt,
    });
    /** Begins attempt n of record (processing, with payment_intent.processing) before its outcome is settled. */
    async function begin(record: PaymentIntentRecord, n: number, createdAt: Date): Promise<PaymentAttemptRecord> {
      const open: PaymentAttemptRecord = { ...attempt(record, n, "declined", createdAt), outcome: "processing", processorReference: null, declineReason: null, settledAt: null };
      assert.equal((await h.intents.beginAttempt(open, createdAt))?.begun, true);
      return open;
    }
    /** Settles attempt n of record as the processor's answer does. */
    const settle = (record: PaymentIntentRecord, n: number, outcome: "declined" | "succeeded", settledAt: Date, maxAttempts = 3) =>
      h.intents.settleAttempt(
        merchantA,
        attempt(record, n, outcome, settledAt).id,
        outcome === "succeeded" ? { outcome, processorReference: `ref_${n}` } : { outcome, processorReference: `ref_${n}`, declineReason: "The card was declined by its issuer." },
        { at: settledAt, maxAttempts },
      );
    /** What the stores hold and the outbox was told, to compare before and after a change that must record nothing. */
    async function snapshot() {
      const endpoints = await h.endpoints.list(merchantA);
      return {
        events: (await h.events.list({ livemode: false, merchantId: merchantA, limit: 1000 })).map((e) => e.id),
        commits: o.commits.length,
        deliveries: await Promise.all(endpoints.map(async (e) => (await deliveriesOf(e.id)).map((d) => d.id))),
      };
    }

    it("records a creation as payment_intent.created with the intent in the GET shape, delivered to each enabled endpoint taking it", async () => {
      const account = accountRecord();
      assert.equal((await h.accounts.insert(account, unlimited)).inserted, true);
      const every = await endpoint();
      const succeededOnly = await endpoint({ eventTypes: ["payment_intent.succeeded"] });
      const ofB = await endpoint({ merchantId: merchantB });
      const record = await insert(1);

      const events = await h.events.list({ livemode: false, merchantId: merchantA, limit: 10 });
      assert.equal(events.length, 1);
      const event = events[0]!;
      assert.deepEqual(
        { type: event.type, merchantId: event.merchantId, paymentIntentId: event.paymentIntentId, createdAt: event.createdAt },
        { type: "payment_intent.created", merchantId: merchantA, paymentIntentId: record.id, createdAt: record.createdAt },
      );
      const view = (await h.intents.findWithAccount(merchantA, record.id))!;
      assert.deepEqual(JSON.parse(event.body), {
        id: event.id,
        type: "payment_intent.created",
        timestamp: record.createdAt.toISOString(),
        data: o.getShape(view, record.createdAt),
        refund: null,
        livemode: false,
        apiKey: null,
      });
      assert.equal(JSON.parse(event.body).data.settlementAccount.id, account.id, "data shows the account a GET shows");

      assert.deepEqual(
        o.commits.map((commit) => commit.map((e) => [e.id, e.type, e.merchantId, e.paymentIntentId, e.body])),
        [[[event.id, event.type, merchantA, record.id, event.body]]],
      );
      assert.deepEqual(await deliveriesOf(every.id), [
        {
          id: (await deliveriesOf(every.id))[0]!.id,
          eventId: event.id,
          eventType: "payment_intent.created",
          endpointId: every.id,
          status: "pending",
          attempts: [],
          nextAttemptAt: record.createdAt,
          createdAt: record.createdAt,
          updatedAt: record.createdAt,
        },
      ]);
      assert.match((await deliveriesOf(every.id))[0]!.id, /^whd_[0-9a-f-]{36}$/);
      assert.deepEqual(await deliveriesOf(succeededOnly.id), []);
      assert.deepEqual(await deliveriesOf(ofB.id, merchantB), []);

      const claimed = await h.queue.claim({ now: farFuture, owner: "contract", leaseMs: 60_000, limit: 10, perEndpointLimit: 10 });
      assert.deepEqual(
        claimed.map((c) => [c.eventId, c.eventType, c.endpoint.id, c.body, c.attemptsMade]),
        [[event.id, "payment_intent.created", every.id, event.body, 0]],
      );
    });

    it("tells the outbox how many deliveries each commit made: 0 when no endpoint takes its event, so nothing wakes the delivery engine", async () => {
      await insert(1);
      await endpoint({ eventTypes: ["payment_intent.succeeded"] });
      await insert(2);
      const every = await endpoint();
      await insert(3);
      assert.deepEqual(o.committedDeliveries, [0, 0, 1]);
      assert.equal((await deliveriesOf(every.id)).length, 1);
    });

    /** Each change at at(20); only the sweep's intent has lapsed by then (a lapsed pending intent shows as expired). */
    const changes: { name: string; type: EventType; status: string; lapsed?: true; begun?: true; change(record: PaymentIntentRecord): Promise<Date> }[] = [
      {
        name: "a cancellation",
        type: "payment_intent.cancelled",
        status: "cancelled",
        change: async (r) => (assert.ok(await h.intents.cancel(merchantA, r.id, at(20))), at(20)),
      },
      {
        name: "a transition to successful",
        type: "payment_intent.succeeded",
        status: "successful",
        change: async (r) => (assert.ok(await h.intents.transition(merchantA, r.id, successOf(r, at(20)))), at(20)),
      },
      {
        name: "a transition to failed",
        type: "payment_intent.failed",
        status: "failed",
        change: async (r) => (assert.ok(await h.intents.transition(merchantA, r.id, { from: "pending", to: "failed", at: at(20) })), at(20)),
      },
      {
        name: "a transition to expired",
        type: "payment_intent.expired",
        status: "expired",
        change: async (r) => (assert.ok(await h.intents.transition(merchantA, r.id, { from: "pending", to: "expired", at: at(20) })), at(20)),
      },
      {
        name: "a begun attempt",
        type: "payment_intent.processing",
        status: "processing",
        change: async (r) => (await begin(r, 1, at(20)), at(20)),
      },
      {
        name: "a declined attempt that leaves the intent pending",
        type: "payment_intent.payment_failed",
        status: "pending",
        begun: true,
        change: async (r) => {
          assert.equal((await settle(r, 1, "declined", at(20)))?.intent.status, "pending");
          return at(20);
        },
      },
      {
        name: "a declined attempt that fails the intent",
        type: "payment_intent.failed",
        status: "failed",
        begun: true,
        change: async (r) => {
          assert.equal((await settle(r, 1, "declined", at(20), 1))?.intent.status, "failed");
          return at(20);
        },
      },
      {
        name: "a successful attempt",
        type: "payment_intent.succeeded",
        status: "successful",
        begun: true,
        change: async (r) => {
          assert.equal((await settle(r, 1, "succeeded", at(20)))?.intent.status, "successful");
          return at(20);
        },
      },
      {
        name: "the expiry sweep",
        type: "payment_intent.expired",
        status: "expired",
        lapsed: true,
        change: async (r) => {
          assert.deepEqual(
            (await h.intents.expireDue(at(20), 10)).map((e) => e.id),
            [r.id],
          );
          return at(20);
        },
      },
    ];

    for (const { name, type, status, lapsed, begun, change } of changes) {
      it(`records ${name} as ${type}, rendered as the intent was after it`, async () => {
        const every = await endpoint();
        const succeededOnly = await endpoint({ eventTypes: ["payment_intent.succeeded"] });
        const record = await insert(1, { expiresAt: lapsed ? at(15) : at(100) });
        // An outcome settles an attempt begun before it (its own payment_intent.processing).
        if (begun) await begin(record, 1, at(10));
        const commitsBefore = o.commits.length;
        const changedAt = await change(record);

        const [event, ...earlier] = await h.events.list({ livemode: false, merchantId: merchantA, limit: 10 });
        assert.deepEqual(earlier.map((e) => e.type), begun ? ["payment_intent.processing", "payment_intent.created"] : ["payment_intent.created"]);
        const created = earlier.at(-1)!;
        assert.ok(event);
        assert.deepEqual(
          { type: event.type, paymentIntentId: event.paymentIntentId, createdAt: event.createdAt },
          { type, paymentIntentId: record.id, createdAt: changedAt },
        );
        const view = (await h.intents.findWithAccount(merchantA, record.id))!;
        const body = JSON.parse(event.body) as { data: { status: string } };
        assert.deepEqual(body, { id: event.id, type, timestamp: changedAt.toISOString(), data: o.getShape(view, changedAt), refund: null, livemode: false, apiKey: null });
        assert.equal(body.data.status, status);
        assert.deepEqual(
          o.commits.slice(commitsBefore).flat().map((e) => e.id),
          [event.id],
        );
        assert.deepEqual(
          (await deliveriesOf(every.id)).map((d) => [d.eventId, d.eventType, d.status, d.nextAttemptAt]),
          [
            [event.id, type, "pending", changedAt],
            ...earlier.map((e) => [e.id, e.type, "pending", e === created ? record.createdAt : e.createdAt]),
          ],
        );
        assert.deepEqual(
          (await deliveriesOf(succeededOnly.id)).map((d) => d.eventId),
          type === "payment_intent.succeeded" ? [event.id] : [],
        );
      });
    }

    it("records nothing for a replay, a no-op or a change that is rolled back", async () => {
      await endpoint();
      const record = await insert(1);
      const cancelled = await insert(2);
      assert.ok(await h.intents.cancel(merchantA, cancelled.id, at(30)));
      const before = await snapshot();
      assert.equal(before.events.length, 3);

      const replay = await h.intents.insert(intentRecord({ id: intentId(3), clientReference: record.clientReference, createdAt: at(40) }));
      assert.equal(replay.inserted, false);
      assert.equal(await h.intents.transition(merchantA, record.id, { from: "successful", to: "failed", at: at(41) }), undefined);
      assert.equal(await h.intents.transition(merchantB, record.id, successOf(record, at(41))), undefined);
      assert.equal(await h.intents.cancel(merchantA, cancelled.id, at(42)), undefined);
      // An attempt on a cancelled intent is not begun; one that does not exist (or is another merchant's) does not settle.
      const refused = await h.intents.beginAttempt({ ...attempt(cancelled, 7, "declined", at(42)), outcome: "processing", settledAt: null }, at(42));
      assert.equal(refused?.begun, false);
      assert.equal(await settle(record, 8, "succeeded", at(42)), undefined);
      assert.deepEqual(await h.intents.expireDue(at(43), 10), []);

      assert.deepEqual(await snapshot(), before);
    });

    it("makes no delivery to a disabled or deleted endpoint, nor to another merchant's", async () => {
      const kept = await endpoint();
      const gone = await endpoint();
      const deleted = await endpoint();
      const ofB = await endpoint({ merchantId: merchantB });
      const first = await insert(1);
      const claimed = await h.queue.claim({ now: farFuture, owner: "contract", leaseMs: 60_000, limit: 10, perEndpointLimit: 10 });
      assert.equal(claimed.length, 3);
      const ofGone = claimed.find((c) => c.endpoint.id === gone.id)!;
      const completion = await h.queue.complete({
        lease: ofGone.lease,
        attempt: { at: at(2), statusCode: 410, durationMs: 5, error: null },
        next: { status: "failed" },
        endpoint: { kind: "gone" },
      });
      assert.deepEqual(completion, { recorded: true, status: "failed", endpointDisabled: "gone", otherDeliveriesFailed: 0 });
      await h.queue.release(claimed.filter((c) => c !== ofGone).map((c) => c.lease));
      assert.equal(await h.endpoints.delete(merchantA, deleted.id, at(3)), true);

      const second = await insert(2);
      const [secondEvent] = await h.events.list({ livemode: false, merchantId: merchantA, limit: 1, paymentIntentId: second.id });
      assert.deepEqual(
        (await deliveriesOf(kept.id)).map((d) => d.eventId),
        [secondEvent!.id, (await h.events.list({ livemode: false, merchantId: merchantA, limit: 1, paymentIntentId: first.id }))[0]!.id],
      );
      assert.deepEqual(
        (await deliveriesOf(gone.id)).map((d) => d.status),
        ["failed"],
      );
      assert.equal(await deliveriesOf(deleted.id), undefined);
      assert.deepEqual(await deliveriesOf(ofB.id, merchantB), []);

      await insert(3, { merchantId: merchantB });
      assert.deepEqual(
        (await deliveriesOf(ofB.id, merchantB)).map((d) => d.eventType),
        ["payment_intent.created"],
      );
      assert.equal((await deliveriesOf(kept.id)).length, 2, "merchant B's event is not delivered to merchant A");
    });

    it("records one event per intent the expiry sweep expires, and none for the others", async () => {
      await insert(1, { expiresAt: at(10) });
      await insert(2, { expiresAt: at(11) });
      await insert(3, { expiresAt: at(100) });
      const commitsBefore = o.commits.length;
      assert.equal((await h.intents.expireDue(at(20), 10)).length, 2);
      const expired = await h.events.list({ livemode: false, merchantId: merchantA, limit: 10, type: "payment_intent.expired" });
      assert.deepEqual(expired.map((e) => e.paymentIntentId).sort(), [intentId(1), intentId(2)]);
      assert.deepEqual(
        o.commits.slice(commitsBefore).flat().map((e) => e.id).sort(),
        expired.map((e) => e.id).sort(),
      );
    });

    it("streams every recorded event once, in the order the outbox was told of them, per merchant", async () => {
      const startA = await h.events.headCursor(merchantA);
      const startB = await h.events.headCursor(merchantB);
      const first = await insert(1);
      await insert(2, { merchantId: merchantB });
      const third = await insert(3, { expiresAt: at(50) });
      assert.ok(await h.intents.transition(merchantA, first.id, successOf(first, at(60))));
      await begin(third, 4, at(49)); // before its deadline (at(50))
      assert.equal((await settle(third, 4, "declined", at(61)))?.intent.status, "pending");
      assert.ok(await h.intents.cancel(merchantA, third.id, at(62)));
      const told = o.commits.flat();
      const toldOf = (merchantId: string) => told.filter((e) => e.merchantId === merchantId).map((e) => [e.id, e.type]);

      assert.deepEqual(
        (await readAll(h.events, merchantA, startA, 2)).map((e) => [e.id, e.type]),
        toldOf(merchantA),
      );
      assert.deepEqual(
        toldOf(merchantA).map(([, type]) => type),
        ["payment_intent.created", "payment_intent.created", "payment_intent.succeeded", "payment_intent.processing", "payment_intent.payment_failed", "payment_intent.cancelled"],
      );
      assert.deepEqual(
        (await readAll(h.events, merchantB, startB)).map((e) => [e.id, e.type]),
        toldOf(merchantB),
      );
    });
  });
}
