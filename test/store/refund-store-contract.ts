import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { PaymentAttemptRecord } from "../../src/domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import type { RefundReason, RefundRecord } from "../../src/domain/refund.js";
import type { EventOutbox, EventStore } from "../../src/store/event-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import type { RefundKey, RefundStore } from "../../src/store/refund-store.js";
import { at, contractMerchants, intentId, intentRecord, uuidLike } from "./contract-records.js";
import { createContractOutbox, type ContractOutbox } from "./event-contract-support.js";

const { a: merchantA, b: merchantB } = contractMerchants;

/** The stores under test, sharing one storage; refunds record events through the outbox given. */
export interface RefundStoresHarness {
  intents: PaymentIntentStore;
  refunds: RefundStore;
  events: EventStore;
  close(): Promise<void>;
}

/** MakeRefundStores builds empty stores (the contract merchants existing) that record events through outbox. */
export type MakeRefundStores = (outbox: EventOutbox) => Promise<RefundStoresHarness>;

export const refundId = (n: number) => `rf_${uuidLike(n)}`;

/**
 * describeRefundStoreContract is what every RefundStore must do
 * (store/refund-store.ts), checked the same on memory and PostgreSQL: the
 * reservation's all-or-nothing step and its bound (never more than was
 * paid, under concurrency too), keys unique forever, the settlement's
 * compare-and-set and its release of a failed amount, leased and fenced
 * claims, pages, tenancy, and the events each change records.
 */
export function describeRefundStoreContract(name: string, makeStores: MakeRefundStores): void {
  describe(`${name}: refund store contract`, () => {
    let h: RefundStoresHarness;
    let o: ContractOutbox;
    let n = 0;
    beforeEach(async () => {
      o = createContractOutbox();
      h = await makeStores(o.outbox);
    });
    afterEach(() => h.close());

    /** A successful intent (paid by attempt pa_<n>) of the merchant. */
    async function paidIntent(k: number, overrides: Partial<PaymentIntentRecord> = {}): Promise<{ intent: PaymentIntentRecord; attempt: PaymentAttemptRecord }> {
      const record = intentRecord({ id: intentId(k), clientReference: `order-${k}`, createdAt: at(k), ...overrides });
      assert.equal((await h.intents.insert(record)).inserted, true);
      const attempt: PaymentAttemptRecord = {
        id: `pa_${uuidLike(k)}`,
        paymentIntentId: record.id,
        merchantId: record.merchantId,
        amount: record.amount,
        method: "card",
        outcome: "succeeded",
        processorReference: `txn_${k}`,
        processor: "test",
        idempotencyKey: `pa_${uuidLike(k)}`,
        nextActionUrl: null,
        lateSuccess: null,
        declineReason: null,
        createdAt: at(k + 1),
        settledAt: at(k + 1),
      };
      // Begun (processing) and settled, as a payment is.
      const open = { ...attempt, outcome: "processing" as const, processorReference: null, settledAt: null };
      assert.equal((await h.intents.beginAttempt(open, at(k + 1)))?.begun, true);
      const paid = await h.intents.settleAttempt(record.merchantId, attempt.id, { outcome: "succeeded", processorReference: attempt.processorReference! }, { at: at(k + 1), maxAttempts: 3 });
      assert.equal(paid?.intent.status, "successful");
      assert.deepEqual(paid.attempt, attempt);
      return { intent: paid.intent, attempt };
    }

    /** A pending refund of intent by attempt, as the service builds one. */
    function refundOf(intent: PaymentIntentRecord, attempt: PaymentAttemptRecord, overrides: Partial<RefundRecord> = {}): RefundRecord {
      n += 1;
      const reason: RefundReason = overrides.reason ?? "requested_by_customer";
      const automatic = reason === "payment_after_close" || reason === "duplicate_payment";
      return {
        id: refundId(n),
        merchantId: intent.merchantId,
        livemode: intent.livemode,
        paymentIntentId: intent.id,
        attemptId: attempt.id,
        amount: 1000n,
        status: "pending",
        reason,
        clientReference: automatic ? null : `rf-${n}`,
        requestFingerprint: automatic ? null : `fingerprint-${n}`,
        failureReason: null,
        processor: "test mode",
        processorReference: null,
        createdAt: at(100 + n),
        updatedAt: at(100 + n),
        checkAfter: at(200 + n),
        meta: [],
        ...overrides,
      };
    }

    const keyOf = (refund: RefundRecord): RefundKey =>
      refund.clientReference === null ? { automaticFor: refund.attemptId } : { clientReference: refund.clientReference };

    /** Reserves refund and asserts it was reserved. */
    async function reserve(refund: RefundRecord) {
      const result = await h.refunds.reserve(refund.merchantId, refund.paymentIntentId, keyOf(refund), () => refund);
      assert.equal(result?.reserved, true, `${refund.id} was reserved`);
      return result!;
    }
    const amountRefunded = async (intent: PaymentIntentRecord) => (await h.intents.findById(intent.merchantId, intent.id))!.amountRefunded;
    const eventsOf = async (intent: PaymentIntentRecord) =>
      (await h.events.list({ livemode: false, merchantId: intent.merchantId, paymentIntentId: intent.id, limit: 100 })).filter((e) => e.type.startsWith("refund."));
    const bodyOf = (event: { body: string }) => JSON.parse(event.body) as { type: string; data: { amountRefunded: string }; refund: Record<string, unknown> | null };

    describe("reserve", () => {
      it("writes the pending refund, raises amountRefunded and moves updatedAt, and round-trips every field", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt, { amount: 1234n, reason: "fraudulent", processorReference: "rfn_x" });
        const result = await reserve(refund);
        assert.deepEqual(result.refund, refund);
        assert.deepEqual(result.intent, { ...intent, amountRefunded: 1234n, updatedAt: refund.createdAt });
        assert.deepEqual(await h.intents.findById(merchantA, intent.id), result.intent);
        assert.deepEqual(await h.refunds.findById(merchantA, refund.id), refund);
        assert.deepEqual(await h.refunds.findForProcessor(refund.id), refund);
      });

      it("records refund.created with the refund and the intent after the change, announced after the commit", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt, { amount: 700n });
        const commitsBefore = o.commits.length;
        await reserve(refund);
        const [event] = await eventsOf(intent);
        assert.ok(event);
        const body = bodyOf(event);
        assert.equal(body.type, "refund.created");
        assert.equal(body.data.amountRefunded, "700");
        assert.deepEqual(
          [body.refund?.["id"], body.refund?.["amount"], body.refund?.["status"], body.refund?.["clientReference"]],
          [refund.id, "700", "pending", refund.clientReference],
        );
        assert.equal(event.createdAt.getTime(), refund.createdAt.getTime());
        assert.deepEqual(o.commits.slice(commitsBefore).flat().map((e) => e.id), [event.id]);
      });

      it("repeats the refund stored under the key when decide writes nothing, and sees the key across the merchant's intents", async () => {
        const { intent, attempt } = await paidIntent(1);
        const other = await paidIntent(2);
        const refund = refundOf(intent, attempt);
        await reserve(refund);
        let seen: RefundRecord | undefined;
        const again = await h.refunds.reserve(merchantA, other.intent.id, { clientReference: refund.clientReference! }, (_intent, existing) => {
          seen = existing;
          return null;
        });
        assert.deepEqual(seen, refund);
        assert.deepEqual(again, { intent: other.intent, refund, reserved: false });
        assert.equal(await amountRefunded(other.intent), 0n);
        assert.equal((await eventsOf(intent)).length, 1);
      });

      it("keeps a key taken for good: a second refund under it fails and writes nothing", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt);
        await reserve(refund);
        const clash = refundOf(intent, attempt, { clientReference: refund.clientReference });
        await assert.rejects(h.refunds.reserve(merchantA, intent.id, { clientReference: refund.clientReference! }, () => clash));
        assert.equal(await h.refunds.findById(merchantA, clash.id), undefined);
        assert.equal(await amountRefunded(intent), 1000n);
      });

      it("writes nothing when decide throws, and answers undefined without deciding for an unknown or another merchant's intent", async () => {
        const { intent, attempt } = await paidIntent(1);
        await assert.rejects(
          h.refunds.reserve(merchantA, intent.id, { clientReference: "x" }, () => {
            throw new Error("refused");
          }),
          /refused/,
        );
        let decided = false;
        const decide = () => {
          decided = true;
          return refundOf(intent, attempt);
        };
        assert.equal(await h.refunds.reserve(merchantB, intent.id, { clientReference: "y" }, decide), undefined);
        assert.equal(await h.refunds.reserve(merchantA, intentId(99), { clientReference: "y" }, decide), undefined);
        assert.equal(decided, false);
        assert.equal(await amountRefunded(intent), 0n);
        assert.deepEqual(await eventsOf(intent), []);
      });

      it("refuses a refund past what was paid, whatever decide said, writing nothing", async () => {
        const { intent, attempt } = await paidIntent(1, { amount: 5000n, totalAmount: 5000n });
        await reserve(refundOf(intent, attempt, { amount: 4000n }));
        const over = refundOf(intent, attempt, { amount: 1001n });
        await assert.rejects(h.refunds.reserve(merchantA, intent.id, keyOf(over), () => over));
        assert.equal(await h.refunds.findById(merchantA, over.id), undefined);
        assert.equal(await amountRefunded(intent), 4000n);
        await reserve(refundOf(intent, attempt, { amount: 1000n }));
        assert.equal(await amountRefunded(intent), 5000n);
      });

      it("runs concurrent reservations on one intent one after another: 30 of 1000 on 20000 make exactly 20", async () => {
        const { intent, attempt } = await paidIntent(1, { amount: 20_000n, totalAmount: 20_000n });
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, () => {
            const refund = refundOf(intent, attempt);
            return h.refunds
              .reserve(merchantA, intent.id, keyOf(refund), (current) => (current.amountRefunded + refund.amount <= current.amount ? refund : null))
              .then(
                (result) => (result?.reserved ? "reserved" : "refused"),
                () => "refused",
              );
          }),
        );
        assert.equal(outcomes.filter((x) => x === "reserved").length, 20);
        assert.equal(await amountRefunded(intent), 20_000n);
        assert.equal((await h.refunds.listByIntent({ merchantId: merchantA, paymentIntentId: intent.id, limit: 100 })).length, 20);
      });

      it("counts no automatic refund in amountRefunded, and keeps one per attempt, on any intent status", async () => {
        const { intent, attempt } = await paidIntent(1);
        const late: PaymentAttemptRecord = { ...attempt, id: `pa_${uuidLike(77)}`, processorReference: "txn_late" };
        const automatic = refundOf(intent, late, { reason: "duplicate_payment", amount: intent.amount });
        const result = await reserve(automatic);
        assert.equal(result.intent.amountRefunded, 0n);
        assert.deepEqual(result.intent, intent);
        assert.equal(await amountRefunded(intent), 0n);
        const repeat = await h.refunds.reserve(merchantA, intent.id, { automaticFor: late.id }, (_i, existing) => (existing ? null : refundOf(intent, late, { reason: "duplicate_payment" })));
        assert.deepEqual(repeat?.refund, automatic);
        assert.equal(repeat?.reserved, false);
        // The merchant's own refunds still have the whole payment.
        await reserve(refundOf(intent, attempt, { amount: intent.amount }));
        assert.equal(await amountRefunded(intent), intent.amount);
      });
    });

    describe("settle", () => {
      it("settles a pending refund once: successful, with the processor's reference, recording refund.succeeded", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt);
        await reserve(refund);
        const settled = await h.refunds.settle(merchantA, refund.id, { status: "successful", at: at(500), processorReference: "rfn_1" });
        const expected = { ...refund, status: "successful" as const, processorReference: "rfn_1", updatedAt: at(500), checkAfter: null };
        assert.deepEqual(settled?.refund, expected);
        assert.equal(settled?.intent.amountRefunded, 1000n);
        assert.equal(await h.refunds.settle(merchantA, refund.id, { status: "failed", at: at(501), processorReference: null, failureReason: "late" }), undefined);
        assert.deepEqual(await h.refunds.findById(merchantA, refund.id), expected);
        assert.equal(await amountRefunded(intent), 1000n);
        const types = (await eventsOf(intent)).map((e) => bodyOf(e).type).sort();
        assert.deepEqual(types, ["refund.created", "refund.succeeded"]);
      });

      it("gives a failed merchant refund's amount back, keeping the reference it had, recording refund.failed", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt, { amount: 3000n, processorReference: "rfn_pending" });
        await reserve(refund);
        const settled = await h.refunds.settle(merchantA, refund.id, { status: "failed", at: at(600), processorReference: null, failureReason: "refused" });
        assert.deepEqual(settled?.refund, { ...refund, status: "failed", failureReason: "refused", updatedAt: at(600), checkAfter: null });
        assert.deepEqual(settled?.intent, { ...intent, amountRefunded: 0n, updatedAt: at(600) });
        assert.equal(await amountRefunded(intent), 0n);
        const failed = (await eventsOf(intent)).find((e) => bodyOf(e).type === "refund.failed");
        assert.ok(failed);
        assert.equal(bodyOf(failed).data.amountRefunded, "0");
        assert.equal(bodyOf(failed).refund?.["failureReason"], "refused");
        // The amount is refundable again.
        await reserve(refundOf(intent, attempt, { amount: intent.amount }));
      });

      it("leaves amountRefunded alone when an automatic refund fails", async () => {
        const { intent, attempt } = await paidIntent(1);
        await reserve(refundOf(intent, attempt, { amount: 500n }));
        const automatic = refundOf(intent, { ...attempt, id: `pa_${uuidLike(88)}` }, { reason: "payment_after_close" });
        await reserve(automatic);
        const settled = await h.refunds.settle(merchantA, automatic.id, { status: "failed", at: at(700), processorReference: null, failureReason: "no" });
        assert.equal(settled?.intent.amountRefunded, 500n);
        assert.equal(await amountRefunded(intent), 500n);
      });

      it("changes nothing for an unknown refund or another merchant's", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt);
        await reserve(refund);
        assert.equal(await h.refunds.settle(merchantB, refund.id, { status: "successful", at: at(800), processorReference: null }), undefined);
        assert.equal(await h.refunds.settle(merchantA, refundId(999), { status: "successful", at: at(800), processorReference: null }), undefined);
        assert.equal((await h.refunds.findById(merchantA, refund.id))?.status, "pending");
        assert.equal(await h.refunds.findById(merchantB, refund.id), undefined);
      });
    });

    describe("postpone, claims and leases", () => {
      it("postpones a pending refund with the processor's reference, recording nothing, and refuses a settled one", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt);
        await reserve(refund);
        assert.equal(await h.refunds.postpone(merchantA, refund.id, { checkAfter: at(900), processorReference: "rfn_2" }), true);
        assert.deepEqual(await h.refunds.findById(merchantA, refund.id), { ...refund, checkAfter: at(900), processorReference: "rfn_2" });
        assert.equal(await h.refunds.postpone(merchantA, refund.id, { checkAfter: at(901), processorReference: null }), true);
        assert.equal((await h.refunds.findById(merchantA, refund.id))?.processorReference, "rfn_2");
        assert.equal((await eventsOf(intent)).length, 1);
        await h.refunds.settle(merchantA, refund.id, { status: "successful", at: at(902), processorReference: null });
        assert.equal(await h.refunds.postpone(merchantA, refund.id, { checkAfter: at(903), processorReference: null }), false);
        assert.equal(await h.refunds.postpone(merchantB, refund.id, { checkAfter: at(903), processorReference: null }), false);
      });

      it("claims due pending refunds of every merchant, earliest check first, up to limit, and each only once while leased", async () => {
        const a = await paidIntent(1);
        const b = await paidIntent(2, { merchantId: merchantB });
        const early = refundOf(a.intent, a.attempt, { checkAfter: at(10) });
        const later = refundOf(b.intent, b.attempt, { checkAfter: at(20) });
        const notDue = refundOf(a.intent, a.attempt, { checkAfter: at(40) });
        const settled = refundOf(a.intent, a.attempt, { checkAfter: at(5) });
        for (const refund of [early, later, notDue, settled]) await reserve(refund);
        await h.refunds.settle(merchantA, settled.id, { status: "successful", at: at(6), processorReference: null });

        const one = await h.refunds.claimDue(at(30), 1, 60_000);
        assert.deepEqual(one.map((c) => c.refund), [early]);
        const rest = await h.refunds.claimDue(at(30), 10, 60_000);
        assert.deepEqual(rest.map((c) => c.refund), [later]);
        assert.deepEqual(await h.refunds.claimDue(at(30), 10, 60_000), []);
        assert.notEqual(one[0]!.leaseToken, rest[0]!.leaseToken);
      });

      it("fences a settlement and a postponement by the lease: a stale token changes nothing once another claim took the refund", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt, { checkAfter: at(10) });
        await reserve(refund);
        const [first] = await h.refunds.claimDue(at(30), 10, 20);
        assert.ok(first);
        await sleep(60);
        const [second] = await h.refunds.claimDue(at(30), 10, 60_000);
        assert.ok(second, "the expired lease made the refund claimable again");
        const stale = { status: "successful" as const, at: at(40), processorReference: null, leaseToken: first.leaseToken };
        assert.equal(await h.refunds.settle(merchantA, refund.id, stale), undefined);
        assert.equal(await h.refunds.postpone(merchantA, refund.id, { checkAfter: at(50), processorReference: null, leaseToken: first.leaseToken }), false);
        assert.equal((await h.refunds.findById(merchantA, refund.id))?.status, "pending");
        const settled = await h.refunds.settle(merchantA, refund.id, { ...stale, leaseToken: second.leaseToken });
        assert.equal(settled?.refund.status, "successful");
      });

      it("gives the lease back with a postponement, so the refund is claimable once due again", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt, { checkAfter: at(10) });
        await reserve(refund);
        const [claim] = await h.refunds.claimDue(at(30), 10, 60_000);
        assert.equal(await h.refunds.postpone(merchantA, refund.id, { checkAfter: at(35), processorReference: "rfn_3", leaseToken: claim!.leaseToken }), true);
        assert.deepEqual(await h.refunds.claimDue(at(34), 10, 60_000), []);
        const [again] = await h.refunds.claimDue(at(35), 10, 60_000);
        assert.deepEqual(again?.refund, { ...refund, checkAfter: at(35), processorReference: "rfn_3" });
      });
    });

    describe("reads", () => {
      it("pages an intent's refunds newest first (createdAt, then id), only the merchant's", async () => {
        const { intent, attempt } = await paidIntent(1);
        const other = await paidIntent(2);
        const made = [
          refundOf(intent, attempt, { createdAt: at(300), updatedAt: at(300) }),
          refundOf(intent, attempt, { createdAt: at(301), updatedAt: at(301) }),
          refundOf(intent, attempt, { createdAt: at(301), updatedAt: at(301) }),
          refundOf(intent, attempt, { createdAt: at(302), updatedAt: at(302) }),
        ];
        for (const refund of made) await reserve(refund);
        await reserve(refundOf(other.intent, other.attempt));
        const page = (after?: RefundRecord) =>
          h.refunds.listByIntent({ merchantId: merchantA, paymentIntentId: intent.id, limit: 2, after: after && { createdAt: after.createdAt, id: after.id } });
        const first = await page();
        assert.deepEqual(first.map((r) => r.id), [made[3]!.id, made[2]!.id]);
        const second = await page(first[1]);
        assert.deepEqual(second.map((r) => r.id), [made[1]!.id, made[0]!.id]);
        assert.deepEqual(await page(second[1]), []);
        assert.deepEqual(await h.refunds.listByIntent({ merchantId: merchantB, paymentIntentId: intent.id, limit: 10 }), []);
      });

      it("keeps what was stored when a record it returned is changed", async () => {
        const { intent, attempt } = await paidIntent(1);
        const refund = refundOf(intent, attempt);
        const result = await reserve(refund);
        result.refund.amount = 1n;
        result.refund.createdAt.setTime(0);
        refund.checkAfter!.setTime(0);
        const found = (await h.refunds.findById(merchantA, refund.id))!;
        found.status = "failed";
        assert.equal((await h.refunds.findById(merchantA, refund.id))?.amount, 1000n);
        assert.equal((await h.refunds.findById(merchantA, refund.id))?.status, "pending");
        assert.notEqual((await h.refunds.findById(merchantA, refund.id))?.createdAt.getTime(), 0);
      });
    });
  });
}
