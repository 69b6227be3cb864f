import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../gen/payments/v2/events_pb.js";
import type { EventRecord } from "../../src/domain/event.js";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import type { EventStore } from "../../src/store/event-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import { at, contractMerchants, intentId, intentRecord, newestFirst, uuidLike } from "./contract-records.js";
import { createContractOutbox, newEndpoint, readAll, successOf, type EventStoresHarness, type MakeEventStores } from "./event-contract-support.js";

const { a: merchantA, b: merchantB } = contractMerchants;

/**
 * describeEventStoreContract is the behaviour every EventStore must have
 * (store/event-store.ts), run against each store kind. Events are written
 * only by the outbox, so every test records them by changing intents.
 */
export function describeEventStoreContract(name: string, makeStores: MakeEventStores): void {
  describe(`${name}: event store contract`, () => {
    let h: EventStoresHarness;
    let intents: PaymentIntentStore;
    let events: EventStore;
    beforeEach(async () => {
      h = await makeStores(createContractOutbox().outbox);
      ({ intents, events } = h);
    });
    afterEach(() => h.close());

    async function insert(n: number, overrides: Partial<PaymentIntentRecord> = {}): Promise<PaymentIntentRecord> {
      const record = intentRecord({ id: intentId(n), clientReference: `order-${n}`, createdAt: at(n), ...overrides });
      assert.equal((await intents.insert(record)).inserted, true);
      return record;
    }
    const ids = (list: readonly EventRecord[]) => list.map((event) => event.id);
    const all = (merchantId: string = merchantA) => events.list({ livemode: false, merchantId, limit: 1000 });

    it("lists a merchant's events newest first in keyset pages, equal times ordered by id", async () => {
      for (let n = 1; n <= 3; n++) await insert(n, { createdAt: at(1) });
      await insert(4, { createdAt: at(0) });
      await insert(5, { createdAt: at(2) });
      const listed = await all();
      assert.equal(listed.length, 5);
      assert.deepEqual(ids(listed), ids([...listed].sort(newestFirst)));
      // Event ids are UUIDv7, increasing as they are recorded: the three equal times list the last recorded first.
      assert.deepEqual(
        listed.map((event) => event.paymentIntentId),
        [5, 3, 2, 1, 4].map(intentId),
      );

      const paged: EventRecord[] = [];
      let after: { createdAt: Date; id: string } | undefined;
      for (;;) {
        const page = await events.list({ livemode: false, merchantId: merchantA, limit: 2, after });
        assert.ok(page.length <= 2);
        if (page.length === 0) break;
        paged.push(...page);
        after = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
      }
      assert.deepEqual(ids(paged), ids(listed));
    });

    it("filters by type and by payment intent, paging within the filter", async () => {
      const first = await insert(1);
      const second = await insert(2);
      await insert(3);
      assert.ok(await intents.transition(merchantA, first.id, successOf(first, at(10))));
      assert.ok(await intents.cancel(merchantA, second.id, at(11)));

      const created = await events.list({ livemode: false, merchantId: merchantA, limit: 10, type: "payment_intent.created" });
      assert.deepEqual(
        created.map((e) => e.paymentIntentId),
        [3, 2, 1].map(intentId),
      );
      const succeeded = await events.list({ livemode: false, merchantId: merchantA, limit: 10, type: "payment_intent.succeeded" });
      assert.deepEqual(
        succeeded.map((e) => [e.type, e.paymentIntentId]),
        [["payment_intent.succeeded", first.id]],
      );
      const ofFirst = await events.list({ livemode: false, merchantId: merchantA, limit: 10, paymentIntentId: first.id });
      assert.deepEqual(
        ofFirst.map((e) => e.type),
        ["payment_intent.succeeded", "payment_intent.created"],
      );
      const both = await events.list({ livemode: false, merchantId: merchantA, limit: 10, paymentIntentId: second.id, type: "payment_intent.cancelled" });
      assert.deepEqual(
        both.map((e) => [e.type, e.paymentIntentId]),
        [["payment_intent.cancelled", second.id]],
      );
      const page1 = await events.list({ livemode: false, merchantId: merchantA, limit: 1, type: "payment_intent.created" });
      const page2 = await events.list({ livemode: false, merchantId: merchantA, limit: 2, type: "payment_intent.created", after: page1[0]! });
      assert.deepEqual(ids([...page1, ...page2]), ids(created));
      assert.deepEqual(await events.list({ livemode: false, merchantId: merchantA, limit: 10, paymentIntentId: intentId(99) }), []);
    });

    it("finds one event of the merchant with both renderings, never another merchant's", async () => {
      const record = await insert(1);
      const [event] = await all();
      assert.ok(event);
      assert.match(event.id, /^evt_test_[0-9a-f-]{36}$/);
      assert.equal(event.merchantId, merchantA);
      assert.equal(event.type, "payment_intent.created");
      assert.equal(event.paymentIntentId, record.id);
      assert.deepEqual(event.createdAt, record.createdAt);
      const body = JSON.parse(event.body);
      assert.equal(body.id, event.id);
      assert.equal(body.data.id, record.id);
      const message = fromBinary(EventSchema, event.payload);
      assert.equal(message.id, event.id);
      assert.equal(message.data?.id, record.id);

      assert.deepEqual(await events.findById(merchantA, event.id), event);
      assert.equal(await events.findById(merchantB, event.id), undefined);
      assert.equal(await events.findById(merchantA, `evt_${uuidLike(999)}`), undefined);
    });

    it("reads events after a cursor in commit order, in pages, without duplicates or gaps", async () => {
      const start = await events.headCursor(merchantA);
      const empty = await events.readAfter(merchantA, start, 10);
      assert.deepEqual(empty, { events: [], cursor: start });
      // Creation times out of order: the stream follows commits, not createdAt.
      for (const [n, time] of [[1, 5], [2, 1], [3, 3], [4, 2], [5, 4]] as const) await insert(n, { createdAt: at(time) });
      const read = await readAll(events, merchantA, start, 2);
      assert.deepEqual(
        read.map((e) => e.paymentIntentId),
        [1, 2, 3, 4, 5].map(intentId),
      );
      const firstTwo = await events.readAfter(merchantA, start, 2);
      assert.equal(firstTwo.events.length, 2);
      const rest = await events.readAfter(merchantA, firstTwo.cursor, 10);
      assert.deepEqual(ids([...firstTwo.events, ...rest.events]), ids(read));
      const after = await events.readAfter(merchantA, rest.cursor, 10);
      assert.deepEqual(after, { events: [], cursor: rest.cursor });
    });

    it("resumes after an event with cursorAfter", async () => {
      const start = await events.headCursor(merchantA);
      for (let n = 1; n <= 4; n++) await insert(n);
      const read = await readAll(events, merchantA, start);
      const cursor = await events.cursorAfter(merchantA, read[1]!.id);
      assert.ok(cursor !== undefined);
      assert.deepEqual(ids(await readAll(events, merchantA, cursor)), ids(read.slice(2)));
      assert.equal(await events.cursorAfter(merchantB, read[1]!.id), undefined);
      assert.equal(await events.cursorAfter(merchantA, `evt_${uuidLike(999)}`), undefined);
    });

    it("starts a stream from now on at headCursor", async () => {
      await insert(1);
      await insert(2);
      const head = await events.headCursor(merchantA);
      assert.deepEqual((await events.readAfter(merchantA, head, 10)).events, []);
      await insert(3);
      assert.deepEqual(
        (await readAll(events, merchantA, head)).map((e) => e.paymentIntentId),
        [intentId(3)],
      );
    });

    it("reads only the given types, moving the cursor past the others", async () => {
      const start = await events.headCursor(merchantA);
      const first = await insert(1);
      await insert(2);
      assert.ok(await intents.transition(merchantA, first.id, successOf(first, at(10))));
      const succeeded = await events.readAfter(merchantA, start, 10, ["payment_intent.succeeded"]);
      assert.deepEqual(
        succeeded.events.map((e) => [e.type, e.paymentIntentId]),
        [["payment_intent.succeeded", first.id]],
      );
      assert.deepEqual((await events.readAfter(merchantA, succeeded.cursor, 10)).events, []);

      const one = await events.readAfter(merchantA, start, 1, ["payment_intent.created"]);
      assert.deepEqual(
        one.events.map((e) => e.paymentIntentId),
        [intentId(1)],
      );
      const two = await events.readAfter(merchantA, one.cursor, 1, ["payment_intent.created"]);
      assert.deepEqual(
        two.events.map((e) => e.paymentIntentId),
        [intentId(2)],
      );
      const none = await events.readAfter(merchantA, two.cursor, 1, ["payment_intent.created"]);
      assert.deepEqual(none.events, []);
      assert.deepEqual((await events.readAfter(merchantA, none.cursor, 10)).events, [], "the cursor moved past the succeeded event");
    });

    it("keeps merchants apart", async () => {
      const startA = await events.headCursor(merchantA);
      const startB = await events.headCursor(merchantB);
      await insert(1);
      await insert(2, { merchantId: merchantB });
      await insert(3);
      assert.deepEqual(
        (await readAll(events, merchantA, startA)).map((e) => e.paymentIntentId),
        [intentId(1), intentId(3)],
      );
      assert.deepEqual(
        (await readAll(events, merchantB, startB)).map((e) => e.paymentIntentId),
        [intentId(2)],
      );
      assert.deepEqual(
        (await all(merchantB)).map((e) => e.merchantId),
        [merchantB],
      );
      assert.deepEqual(await events.list({ livemode: false, merchantId: merchantB, limit: 10, paymentIntentId: intentId(1) }), []);
    });

    it("deletes events recorded before a time, oldest first, with their ended deliveries, keeping one with a pending delivery", async () => {
      const first = await insert(1);
      await insert(2);
      const cursor = (await events.cursorAfter(merchantA, (await all())[1]!.id))!;
      assert.ok((await h.endpoints.create(newEndpoint(), 10)).created);
      const held = await insert(3);
      const done = await insert(4);
      await insert(5, { merchantId: merchantB, clientReference: "order-b5" });
      await insert(20);
      // The delivery of 4's event succeeds; 3's stays pending.
      const claimed = await h.queue.claim({ now: at(4), owner: "contract", leaseMs: 60_000, limit: 10, perEndpointLimit: 10 });
      assert.deepEqual(claimed.map((c) => c.eventType), ["payment_intent.created", "payment_intent.created"]);
      const ofDone = claimed.find((c) => JSON.parse(c.body).data.id === done.id)!;
      await h.queue.complete({ lease: ofDone.lease, attempt: { at: at(6), statusCode: 204, durationMs: 2, error: null }, next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });
      await h.queue.release(claimed.filter((c) => c !== ofDone).map((c) => c.lease));

      // At most limit, oldest first.
      assert.equal(await events.deleteRecordedBefore(at(10), 1), 1);
      assert.deepEqual(
        (await all()).map((e) => e.paymentIntentId),
        [20, 4, 3, 2].map(intentId),
      );
      assert.equal(await events.deleteRecordedBefore(at(10), 100), 3);
      assert.deepEqual(
        (await all()).map((e) => e.paymentIntentId),
        [20, 3].map(intentId),
      );
      assert.deepEqual(await all(merchantB), []);
      assert.equal(await events.list({ livemode: false, merchantId: merchantA, limit: 10, paymentIntentId: first.id }).then((l) => l.length), 0);
      // The succeeded delivery went with its event; the pending one and its event stay.
      const [endpoint] = await h.endpoints.list(merchantA);
      const deliveries = await h.endpoints.listDeliveries({ merchantId: merchantA, endpointId: endpoint!.id, limit: 10 });
      assert.deepEqual(
        deliveries!.map((d) => d.status),
        ["pending", "pending"],
      );
      const [heldEvent] = await events.list({ livemode: false, merchantId: merchantA, limit: 1, paymentIntentId: held.id });
      assert.deepEqual(
        deliveries!.filter((d) => d.eventId === heldEvent!.id).map((d) => d.status),
        ["pending"],
      );
      // A stream resuming behind deleted events goes on with the next stored one.
      assert.deepEqual(
        (await readAll(events, merchantA, cursor)).map((e) => e.paymentIntentId),
        [3, 20].map(intentId),
      );
      assert.equal(await events.deleteRecordedBefore(at(10), 100), 0);
    });

    it("hands out copies, so a caller cannot change what is stored", async () => {
      await insert(1);
      const [event] = await all();
      const kept = await events.findById(merchantA, event!.id);
      event!.createdAt.setTime(0);
      event!.payload.fill(0);
      assert.deepEqual(await events.findById(merchantA, event!.id), kept);
      assert.notEqual(kept!.createdAt.getTime(), 0);
    });
  });
}
