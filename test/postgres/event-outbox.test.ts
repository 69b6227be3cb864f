import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { EventRecord, EventType } from "../../src/domain/event.js";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import type { EventOutbox } from "../../src/store/event-store.js";
import type { IntentWithAccount } from "../../src/store/payment-intent-store.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createManualClock } from "../support/manual-clock.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { createLiveIntents } from "./support/live-intents.js";

const skip = await postgresUnavailable();

const clock = createManualClock("2026-06-01T09:00:00.000Z");
const ids = createIdGenerator(clock);
const liveIntent = createLiveIntents(clock, ids);

/** What the fake outbox rendered: enough to check what the store handed it. */
interface Rendered {
  type: EventType;
  change: IntentWithAccount;
  at: Date;
}

/** An outbox that renders a small JSON of what it was given, and records the calls. */
function createRecordingOutbox() {
  const rendered: Rendered[] = [];
  const committed: EventRecord[][] = [];
  const outbox: EventOutbox = {
    render(type, change, at) {
      rendered.push({ type, change: structuredClone(change), at });
      const body = JSON.stringify({ type, intent: change.intent.id, status: change.intent.status, account: change.account?.id ?? null });
      return { id: ids.eventId(false), createdAt: at, payload: new Uint8Array([0, 1, 2, 255, ...Buffer.from(type)]), body };
    },
    deliveryId: () => ids.webhookDeliveryId(),
    committed(events) {
      committed.push(structuredClone([...events]));
    },
  };
  return { outbox, rendered, committed };
}

describe("PostgreSQL outbox: events recorded with the intents' changes", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  const recording = createRecordingOutbox();
  const merchantId = "mer_outbox";
  const quietMerchant = "mer_quiet";
  let firstAccount: string;
  let secondAccount: string;
  const endpoint = { all: "we_all", succeeded: "we_succeeded", disabled: "we_disabled", deleted: "we_deleted" };

  const query = <R extends Record<string, unknown>>(sql: string, params: unknown[] = []) => queryDatabase<R>(db.url, sql, params);

  const intentOf = (clientReference: string, splits: string[] = [], merchant = merchantId): PaymentIntentRecord =>
    liveIntent({
      clientReference,
      merchantId: merchant,
      splits: splits.map((settlementAccountId) => ({ settlementAccountId, splitAmount: 1000n })),
      expiresAt: new Date(clock.now().getTime() + 3_600_000),
    });


  const deliveriesOf = async (eventId: string) =>
    (
      await query<{ endpoint_id: string; status: string; next_attempt_at: Date; id: string }>(
        "select endpoint_id, status, next_attempt_at, id from webhook_deliveries where event_id = $1 order by endpoint_id",
        [eventId],
      )
    ).rows;
  const eventCount = async () => Number((await query<{ n: string }>("select count(*) as n from events")).rows[0]!.n);

  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url, { poolMax: 6, clock, outbox: recording.outbox });
    await stores.apiKeys.ensureMerchant(merchantId, "Outbox");
    await stores.apiKeys.ensureMerchant(quietMerchant, "Quiet");
    const account = async (accountNumber: string) => {
      const result = await stores.accounts.insert(
        {
          livemode: false,
          id: ids.settlementAccountId(false),
          merchantId,
          accountName: "Shop",
          accountNumber,
          bankName: "Test Bank",
          bankCode: "058",
          createdAt: clock.now(),
          updatedAt: clock.now(),
        },
        { maxPerMerchant: 10 },
      );
      assert.ok(result.inserted);
      clock.advance(1000);
      return result.record.id;
    };
    firstAccount = await account("1000000001");
    secondAccount = await account("1000000002");
    const add = async (id: string, eventTypes: EventType[]) => {
      const created = await stores.endpoints.create(
        { livemode: false, id, merchantId, url: `https://${id}.example.com/`, eventTypes, description: null, secret: "whsec_c2VjcmV0", createdAt: clock.now() },
        10,
      );
      assert.equal(created.created, true);
    };
    await add(endpoint.all, []);
    await add(endpoint.succeeded, ["payment_intent.succeeded"]);
    await add(endpoint.disabled, []);
    await add(endpoint.deleted, []);
    await query("update webhook_endpoints set status = 'disabled', disabled_reason = 'gone' where id = $1", [endpoint.disabled]);
    assert.equal(await stores.endpoints.delete(merchantId, endpoint.deleted, clock.now()), true);
  });
  after(async () => {
    await stores?.close();
    await db?.drop();
  });
  beforeEach(() => {
    recording.rendered.length = 0;
    recording.committed.length = 0;
    clock.advance(1000);
  });

  it("records a creation with the list item's account, one delivery per enabled endpoint taking it, announced after commit", async () => {
    const record = intentOf("create-1", [secondAccount]);
    const result = await stores.intents.insert(record);
    assert.equal(result.inserted, true);
    assert.equal(recording.rendered.length, 1);
    const [rendered] = recording.rendered;
    assert.equal(rendered!.type, "payment_intent.created");
    assert.deepEqual(rendered!.at, record.createdAt);
    assert.deepEqual(rendered!.change.intent, record);
    assert.equal(rendered!.change.account?.id, secondAccount, "the first split's account");
    assert.equal(recording.committed.length, 1);
    const [event] = recording.committed[0]!;
    assert.deepEqual(
      { merchantId: event!.merchantId, type: event!.type, paymentIntentId: event!.paymentIntentId, createdAt: event!.createdAt },
      { merchantId, type: "payment_intent.created", paymentIntentId: record.id, createdAt: record.createdAt },
    );
    const deliveries = await deliveriesOf(event!.id);
    assert.deepEqual(
      deliveries.map((d) => [d.endpoint_id, d.status, d.next_attempt_at.getTime()]),
      [[endpoint.all, "pending", record.createdAt.getTime()]],
    );
    assert.match(deliveries[0]!.id, /^whd_/);
    // The event reads back exactly as written, bytes included.
    assert.deepEqual(await stores.events.findById(merchantId, event!.id), event);
  });

  it("shows the merchant's earliest account when the intent has no splits", async () => {
    await stores.intents.insert(intentOf("create-2"));
    assert.equal(recording.rendered[0]!.change.account?.id, firstAccount);
  });

  it("records nothing for an idempotent replay", async () => {
    const record = intentOf("create-3");
    await stores.intents.insert(record);
    const before = await eventCount();
    recording.committed.length = 0;
    const replay = await stores.intents.insert({ ...record, id: ids.paymentIntentId(false) });
    assert.equal(replay.inserted, false);
    assert.equal(await eventCount(), before);
    assert.equal(recording.committed.length, 0);
  });

  it("records nothing when the change is rolled back", async () => {
    const before = await eventCount();
    await assert.rejects(stores.intents.insert(intentOf("create-4", ["sa_missing"])), (error: unknown) => {
      assert.ok(error instanceof ConnectError && error.code === Code.InvalidArgument);
      return true;
    });
    const record = intentOf("create-5");
    await stores.intents.insert(record);
    const other = intentOf("create-6");
    await stores.intents.insert(other);
    const open = {
      id: `pa_dup_${record.id}`,
      paymentIntentId: other.id,
      merchantId,
      amount: other.amount,
      method: "card",
      outcome: "processing" as const,
      processorReference: null,
      processor: "test",
      idempotencyKey: `pa_dup_${record.id}`,
      nextActionUrl: null,
      lateSuccess: null,
      declineReason: null,
      createdAt: clock.now(),
      settledAt: null,
    };
    assert.equal((await stores.intents.beginAttempt(open, clock.now()))?.begun, true);
    recording.committed.length = 0;
    // The same attempt id on the other intent: the insert fails, and the intent's move to processing and its event roll back with it.
    await assert.rejects(stores.intents.beginAttempt({ ...open, paymentIntentId: record.id }, clock.now()));
    assert.equal((await stores.intents.findById(merchantId, record.id))?.status, "pending");
    assert.equal(await eventCount(), before + 3, "only the creations of create-5 and create-6 and create-6's processing");
  });

  it("records a transition to a final status, delivered to the endpoints taking its type", async () => {
    const record = intentOf("transition-1");
    await stores.intents.insert(record);
    recording.committed.length = 0;
    const at = clock.now();
    const changed = await stores.intents.transition(merchantId, record.id, { from: "pending", to: "successful", at, transaction: "txn-1" });
    assert.equal(changed?.status, "successful");
    const [event] = recording.committed[0]!;
    assert.equal(event!.type, "payment_intent.succeeded");
    assert.equal(recording.rendered.at(-1)!.change.intent.transaction, "txn-1");
    assert.deepEqual((await deliveriesOf(event!.id)).map((d) => d.endpoint_id), [endpoint.all, endpoint.succeeded]);
    // A transition that does not apply records nothing.
    recording.committed.length = 0;
    assert.equal(await stores.intents.transition(merchantId, record.id, { from: "pending", to: "failed", at }), undefined);
    assert.equal(recording.committed.length, 0);
  });

  it("records a cancellation", async () => {
    const record = intentOf("cancel-1");
    await stores.intents.insert(record);
    recording.committed.length = 0;
    assert.equal((await stores.intents.cancel(merchantId, record.id, clock.now()))?.status, "cancelled");
    assert.equal(recording.committed[0]![0]!.type, "payment_intent.cancelled");
    assert.equal(recording.rendered.at(-1)!.change.intent.deletedAt?.getTime(), clock.now().getTime());
    recording.committed.length = 0;
    assert.equal(await stores.intents.cancel(merchantId, record.id, clock.now()), undefined);
    assert.equal(recording.committed.length, 0);
  });

  it("records a declined attempt as payment_failed, and a failing one as failed only", async () => {
    const record = intentOf("attempt-1");
    await stores.intents.insert(record);
    const attemptOf = (n: number) => ({
      id: `pa_${n}_${record.id}`,
      paymentIntentId: record.id,
      merchantId,
      amount: record.amount,
      method: "card",
      outcome: "declined" as const,
      processorReference: `ref-${n}`,
      processor: "test",
      idempotencyKey: `pa_${n}_${record.id}`,
      nextActionUrl: null,
      lateSuccess: null,
      declineReason: "insufficient funds",
      createdAt: clock.now(),
      settledAt: clock.now(),
    });
    /** Begins attempt n (processing) and settles it declined, as the processor's answer does. */
    const decline = async (n: number, maxAttempts: number) => {
      assert.equal((await stores.intents.beginAttempt({ ...attemptOf(n), outcome: "processing", processorReference: null, declineReason: null, settledAt: null }, clock.now()))?.begun, true);
      recording.committed.length = 0;
      const a = attemptOf(n);
      return stores.intents.settleAttempt(merchantId, a.id, { outcome: "declined", processorReference: a.processorReference, declineReason: a.declineReason }, { at: clock.now(), maxAttempts });
    };
    await decline(1, 3);
    assert.deepEqual(recording.committed.flat().map((e) => e.type), ["payment_intent.payment_failed"]);
    assert.equal(recording.rendered.at(-1)!.change.intent.status, "pending");

    const result = await decline(2, 2);
    assert.equal(result?.intent.status, "failed");
    assert.deepEqual(recording.committed.flat().map((e) => e.type), ["payment_intent.failed"]);
    // What was rendered is what was stored.
    assert.deepEqual(recording.rendered.at(-1)!.change.intent, result!.intent);
  });

  it("records one event per intent the sweep expires, in one transaction", async () => {
    const a = intentOf("expire-a");
    const b = intentOf("expire-b");
    await stores.intents.insert(a);
    await stores.intents.insert(b);
    recording.committed.length = 0;
    const at = new Date(clock.now().getTime() + 7_200_000);
    const expired = await stores.intents.expireDue(at, 100);
    assert.ok(expired.length >= 2);
    assert.equal(recording.committed.length, 1, "one commit announces them all");
    const events = recording.committed[0]!;
    assert.equal(events.length, expired.length);
    assert.ok(events.every((e) => e.type === "payment_intent.expired" && e.createdAt.getTime() === at.getTime()));
    assert.deepEqual(new Set(events.map((e) => e.paymentIntentId)), new Set(expired.map((i) => i.id)));
  });

  it("records a creation for a merchant without endpoints, with no delivery", async () => {
    await stores.apiKeys.ensureMerchant(quietMerchant, "Quiet");
    const record = intentOf("quiet-1", [], quietMerchant);
    await stores.intents.insert(record);
    const [event] = recording.committed[0]!;
    assert.equal(recording.rendered[0]!.change.account, null);
    assert.deepEqual(await deliveriesOf(event!.id), []);
    assert.equal((await stores.events.list({ livemode: false, merchantId: quietMerchant, limit: 10 }))[0]?.id, event!.id);
  });
  describe("a create with a remembered context (one round trip)", () => {
    const merchant = "mer_remembered";
    const intentsOf = async (reference: string) =>
      Number((await query<{ n: string }>("select count(*) as n from payment_intents where merchant_id = $1 and client_reference = $2", [merchant, reference])).rows[0]!.n);
    const addAccount = async (accountNumber: string, createdAt: Date) => {
      const result = await stores.accounts.insert(
        { livemode: false, id: ids.settlementAccountId(false), merchantId: merchant, accountName: "Shop", accountNumber, bankName: "Bank", bankCode: "058", createdAt, updatedAt: createdAt },
        { maxPerMerchant: 10 },
      );
      assert.ok(result.inserted);
      return result.record.id;
    };

    it("records the event and its deliveries as the long way does, and sees a context that changed", async () => {
      await stores.apiKeys.ensureMerchant(merchant, "Remembered");
      const late = await addAccount("2000000001", new Date("2026-06-01T08:00:00.000Z"));
      // The first create reads the context; the next ones use what it read.
      await stores.intents.insert(intentOf("r-1", [], merchant));
      await stores.intents.insert(intentOf("r-2", [], merchant));
      assert.equal(recording.rendered[1]!.change.account?.id, late);
      assert.deepEqual(await deliveriesOf(recording.committed[1]![0]!.id), []);

      // An endpoint registered since: the remembered context no longer holds.
      const created = await stores.endpoints.create(
        { livemode: false, id: "we_remembered", merchantId: merchant, url: "https://r.example.com/", eventTypes: [], description: null, secret: "whsec_cg", createdAt: clock.now() },
        10,
      );
      assert.equal(created.created, true);
      recording.committed.length = 0;
      const third = intentOf("r-3", [], merchant);
      assert.equal((await stores.intents.insert(third)).inserted, true);
      assert.equal(await intentsOf("r-3"), 1);
      assert.equal(recording.committed.length, 1, "announced once");
      const [event] = recording.committed[0]!;
      assert.deepEqual((await deliveriesOf(event!.id)).map((d) => d.endpoint_id), ["we_remembered"]);
      assert.equal((await stores.events.list({ livemode: false, merchantId: merchant, limit: 10, paymentIntentId: third.id })).length, 1);

      // An account dated earlier becomes the earliest: the list item shows it.
      const earlier = await addAccount("2000000002", new Date("2026-05-01T08:00:00.000Z"));
      recording.rendered.length = 0;
      await stores.intents.insert(intentOf("r-4", [], merchant));
      assert.equal(recording.rendered.at(-1)!.change.account?.id, earlier);
      assert.equal(await intentsOf("r-4"), 1);

      // With a split, the split's account; a replay records nothing.
      const split = intentOf("r-5", [late], merchant);
      await stores.intents.insert(split);
      await stores.intents.insert(intentOf("r-6", [late], merchant));
      assert.equal(recording.rendered.at(-1)!.change.account?.id, late);
      recording.committed.length = 0;
      const replay = await stores.intents.insert({ ...split, id: ids.paymentIntentId(false) });
      assert.equal(replay.inserted, false);
      assert.equal(replay.inserted === false && replay.existing.id, split.id);
      assert.equal(recording.committed.length, 0);
      assert.equal((await stores.events.list({ livemode: false, merchantId: merchant, limit: 50 })).length, 6);
    });
  });
});
