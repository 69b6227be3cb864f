import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PaymentAttemptRecord } from "../../src/domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import { at, contractMerchants, intentId, uuidLike, type ContractContext } from "./contract-records.js";

const { a: merchantA, b: merchantB } = contractMerchants;
const maxAttempts = 3;

/**
 * attemptLifecycleContract: an attempt begun (processing) before its
 * processor is called and settled once afterwards, whichever path brings its
 * outcome first (docs/payments.md, The payment lifecycle).
 */
export function attemptLifecycleContract(c: ContractContext): void {
  describe("attempt lifecycle", () => {
    const attemptId = (n: number) => `pa_${uuidLike(900 + n)}`;
    function processing(intent: PaymentIntentRecord, n: number, createdAt = at(5)): PaymentAttemptRecord {
      return {
        id: attemptId(n),
        paymentIntentId: intent.id,
        merchantId: intent.merchantId,
        amount: intent.amount,
        method: "card",
        outcome: "processing",
        processor: "test",
        idempotencyKey: attemptId(n),
        processorReference: null,
        nextActionUrl: null,
        declineReason: null,
        lateSuccess: null,
        createdAt,
        settledAt: null,
      };
    }
    async function begun(n = 1, intentOverrides: Partial<PaymentIntentRecord> = {}) {
      const intent = await c.insertIntent({ id: intentId(n), clientReference: `ref-${n}`, expiresAt: at(1000), ...intentOverrides });
      const attempt = processing(intent, n);
      const result = await c.intents.beginAttempt(attempt, at(50));
      assert.equal(result?.begun, true);
      return { intent, attempt };
    }

    it("begins an attempt on a payable intent: the attempt is processing and the intent too", async () => {
      const { intent, attempt } = await begun();
      const processingIntent = { ...intent, status: "processing" as const, updatedAt: attempt.createdAt };
      assert.deepEqual(await c.intents.findById(merchantA, intent.id), processingIntent);
      assert.deepEqual(await c.intents.listAttempts(merchantA, intent.id), [attempt]);
      assert.deepEqual(await c.intents.findAttempt(merchantA, attempt.id), attempt);
      assert.equal(await c.intents.findAttempt(merchantB, attempt.id), undefined);
      assert.deepEqual(await c.intents.findAttemptForProcessor("test", attempt.idempotencyKey), attempt);
      assert.equal(await c.intents.findAttemptForProcessor("other", attempt.idempotencyKey), undefined);
      // A second begin finds the intent processing: nothing is written, and it may not be cancelled or expire.
      const again = await c.intents.beginAttempt(processing(intent, 2), at(50));
      assert.deepEqual(again, { begun: false, intent: processingIntent });
      assert.equal(await c.intents.cancel(merchantA, intent.id, at(6)), undefined);
      assert.deepEqual(await c.intents.expireDue(at(2000), 10), []);
      assert.equal((await c.intents.listAttempts(merchantA, intent.id)).length, 1);
    });

    it("begins nothing on an intent that is not payable: cancelled, past its deadline, another merchant's", async () => {
      const cancelled = await c.insertIntent({ id: intentId(1), clientReference: "c" });
      await c.intents.cancel(merchantA, cancelled.id, at(2));
      assert.equal((await c.intents.beginAttempt(processing(cancelled, 1), at(50)))?.begun, false);
      const lapsed = await c.insertIntent({ id: intentId(2), clientReference: "l", expiresAt: at(5) });
      assert.deepEqual(await c.intents.beginAttempt(processing(lapsed, 2, at(5)), at(50)), { begun: false, intent: lapsed });
      assert.equal(await c.intents.beginAttempt({ ...processing(lapsed, 3), merchantId: merchantB }, at(50)), undefined);
      assert.deepEqual(await c.intents.listAttempts(merchantA, cancelled.id), []);
      assert.deepEqual(await c.intents.listAttempts(merchantA, lapsed.id), []);
    });

    it("settles a success once: the intent is paid, and a repeat or a late decline changes nothing", async () => {
      const { intent, attempt } = await begun();
      const options = { at: at(7), maxAttempts };
      const settled = await c.intents.settleAttempt(merchantA, attempt.id, { outcome: "succeeded", processorReference: "txn_1" }, options);
      const paidAttempt = { ...attempt, outcome: "succeeded" as const, processorReference: "txn_1", settledAt: at(7) };
      const paid = { ...intent, status: "successful" as const, transaction: "txn_1", updatedAt: at(7) };
      assert.deepEqual(settled, { intent: paid, attempt: paidAttempt, changed: true });
      const repeat = await c.intents.settleAttempt(merchantA, attempt.id, { outcome: "succeeded", processorReference: "txn_1" }, { ...options, at: at(8) });
      assert.deepEqual(repeat, { intent: paid, attempt: paidAttempt, changed: false });
      const late = await c.intents.settleAttempt(merchantA, attempt.id, { outcome: "declined", processorReference: null, declineReason: "no" }, { ...options, at: at(9) });
      assert.deepEqual(late, { intent: paid, attempt: paidAttempt, changed: false });
      assert.deepEqual(await c.intents.findById(merchantA, intent.id), paid);
      assert.equal(await c.intents.settleAttempt(merchantB, attempt.id, { outcome: "succeeded", processorReference: "txn_1" }, options), undefined);
    });

    it("sends the intent back to pending on a decline, and fails it at the last allowed decline", async () => {
      const { intent } = await begun();
      for (let n = 1; n <= maxAttempts; n++) {
        const attempt = n === 1 ? processing(intent, 1) : processing(intent, n, at(5 + n));
        if (n > 1) assert.equal((await c.intents.beginAttempt(attempt, at(50)))?.begun, true);
        const declined = await c.intents.settleAttempt(
          merchantA,
          attempt.id,
          { outcome: "declined", processorReference: `ref_${n}`, declineReason: "The card was declined by its issuer." },
          { at: at(5 + n), maxAttempts },
        );
        assert.equal(declined?.changed, true);
        assert.equal(declined?.attempt.outcome, "declined");
        assert.equal(declined?.attempt.declineReason, "The card was declined by its issuer.");
        assert.equal(declined?.intent.status, n < maxAttempts ? "pending" : "failed");
      }
      assert.equal((await c.intents.findById(merchantA, intent.id))?.status, "failed");
    });

    it("moves a processing attempt to requires_action with the customer's next action, then settles it", async () => {
      const { intent, attempt } = await begun();
      const url = "http://127.0.0.1/checkout/x/3ds";
      const action = await c.intents.settleAttempt(
        merchantA,
        attempt.id,
        { outcome: "requires_action", processorReference: "txn_3ds", url },
        { at: at(7), maxAttempts, checkAfter: at(60) },
      );
      assert.deepEqual(action?.intent, { ...intent, status: "requires_action", nextActionUrl: url, updatedAt: at(7) });
      assert.deepEqual(action?.attempt, { ...attempt, outcome: "requires_action", processorReference: "txn_3ds", nextActionUrl: url });
      // A repeated redirect changes nothing; the success clears the next action.
      const repeat = await c.intents.settleAttempt(merchantA, attempt.id, { outcome: "requires_action", processorReference: "txn_3ds", url }, { at: at(8), maxAttempts });
      assert.equal(repeat?.changed, false);
      const paid = await c.intents.settleAttempt(merchantA, attempt.id, { outcome: "succeeded", processorReference: "txn_3ds" }, { at: at(9), maxAttempts });
      assert.deepEqual(paid?.intent, { ...intent, status: "successful", transaction: "txn_3ds", nextActionUrl: null, updatedAt: at(9) });
      assert.equal(paid?.attempt.nextActionUrl, null);
    });

    it("records a success for an intent that no longer waits for it as a late success, and the intent keeps its status", async () => {
      // The lifecycle keeps an intent waiting while its attempt is open; a transition stands for whatever closed it anyway.
      const { intent, attempt } = await begun(1);
      const expired = await c.intents.transition(merchantA, intent.id, { from: "processing", to: "expired", at: at(6) });
      const late = await c.intents.settleAttempt(merchantA, attempt.id, { outcome: "succeeded", processorReference: "txn_late" }, { at: at(7), maxAttempts });
      assert.deepEqual(late, {
        intent: expired,
        attempt: { ...attempt, outcome: "succeeded", processorReference: "txn_late", lateSuccess: "payment_after_close", settledAt: at(7) },
        changed: true,
        lateSuccess: "payment_after_close",
      });
      assert.deepEqual(await c.intents.findById(merchantA, intent.id), expired);

      const { intent: other, attempt: second } = await begun(2);
      const paid = await c.intents.transition(merchantA, other.id, { from: "processing", to: "successful", at: at(6), transaction: "txn_first" });
      const duplicate = await c.intents.settleAttempt(merchantA, second.id, { outcome: "succeeded", processorReference: "txn_second" }, { at: at(7), maxAttempts });
      assert.equal(duplicate?.lateSuccess, "duplicate_payment");
      assert.equal(duplicate?.attempt.outcome, "succeeded");
      assert.deepEqual(await c.intents.findById(merchantA, other.id), paid);
    });

    it("claims due open attempts with a fenced lease: a stale lease changes nothing, the holder's settles", async () => {
      const { attempt } = await begun(1);
      const { attempt: notDue } = await begun(2);
      await c.intents.postponeAttempt(merchantA, notDue.id, { checkAfter: at(500), processorReference: "txn_later" });
      assert.equal((await c.intents.findAttempt(merchantA, notDue.id))?.processorReference, "txn_later");
      const claimed = await c.intents.claimDueAttempts(at(60), 10, 60_000);
      assert.deepEqual(claimed.map((x) => x.attempt), [attempt]);
      // Leased: another claim takes nothing.
      assert.deepEqual(await c.intents.claimDueAttempts(at(60), 10, 60_000), []);
      const token = claimed[0]!.leaseToken;
      const stale = await c.intents.settleAttempt(merchantA, attempt.id, { outcome: "succeeded", processorReference: "txn_1" }, { at: at(61), maxAttempts, leaseToken: "stale" });
      assert.equal(stale?.changed, false);
      assert.equal(await c.intents.postponeAttempt(merchantA, attempt.id, { checkAfter: at(70), processorReference: null, leaseToken: "stale" }), false);
      // The holder postpones (giving the lease back), and the next claim takes it again.
      assert.equal(await c.intents.postponeAttempt(merchantA, attempt.id, { checkAfter: at(70), processorReference: "txn_1", leaseToken: token }), true);
      assert.deepEqual(await c.intents.claimDueAttempts(at(65), 10, 60_000), []);
      const again = await c.intents.claimDueAttempts(at(70), 10, 60_000);
      assert.equal(again.length, 1);
      const settled = await c.intents.settleAttempt(merchantA, attempt.id, { outcome: "succeeded", processorReference: "txn_1" }, { at: at(71), maxAttempts, leaseToken: again[0]!.leaseToken });
      assert.equal(settled?.changed, true);
      assert.equal(settled?.intent.status, "successful");
      // Settled attempts are never claimed.
      assert.deepEqual((await c.intents.claimDueAttempts(at(1000), 10, 60_000)).map((x) => x.attempt.id), [notDue.id]);
    });

    it("raises each old open attempt's alarm once", async () => {
      const { attempt } = await begun(1);
      const young = processing(await c.insertIntent({ id: intentId(2), clientReference: "young", expiresAt: at(1000) }), 2, at(100));
      await c.intents.beginAttempt(young, at(150));
      assert.deepEqual(await c.intents.alarmOpenAttempts(at(50), 10), [attempt]);
      assert.deepEqual(await c.intents.alarmOpenAttempts(at(50), 10), []);
      assert.deepEqual((await c.intents.alarmOpenAttempts(at(200), 10)).map((a) => a.id), [young.id]);
    });

    it("settles concurrent outcomes of one attempt exactly once", async () => {
      const { attempt } = await begun();
      const outcomes = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          c.intents.settleAttempt(
            merchantA,
            attempt.id,
            n % 2 ? { outcome: "succeeded", processorReference: "txn_1" } : { outcome: "declined", processorReference: null, declineReason: "no" },
            { at: at(10 + n), maxAttempts },
          ),
        ),
      );
      assert.equal(outcomes.filter((o) => o?.changed).length, 1);
      const final = await c.intents.findAttempt(merchantA, attempt.id);
      assert.ok(final?.outcome === "succeeded" || final?.outcome === "declined");
    });
  });
}
