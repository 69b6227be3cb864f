import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import type { PaymentAttemptRecord } from "../../src/domain/payment-attempt.js";
import type { Logger } from "../../src/lib/logger.js";
import type { RefundOutcome, RefundRef, RefundRequest } from "../../src/processor/payment-processor.js";
import { createTestModeProcessor } from "../../src/processor/test-mode-processor.js";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { expectRefund, paidIntent, refundRoutes, type RefundJson, type RefundRoutes } from "../support/refund-client.js";
import { createRestClient, expectJson, uniqueReference, type EventJson, type PaymentIntentJson, type PaymentIntentListItemJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/**
 * A processor whose refund answers the test scripts, one per call, and that
 * counts what it is asked per idempotency key; unscripted calls refund as the
 * test-mode processor does.
 */
function scriptedProcessor() {
  const real = createTestModeProcessor();
  const refundScript: (RefundOutcome | "real" | "hang")[] = [];
  const statusScript: RefundOutcome[] = [];
  const refundCalls = new Map<string, number>();
  const statusCalls = new Map<string, number>();
  const count = (calls: Map<string, number>, key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);
  return {
    refundScript,
    statusScript,
    refundCalls,
    statusCalls,
    processor: {
      ...real,
      async refund(request: RefundRequest, signal: AbortSignal): Promise<RefundOutcome> {
        count(refundCalls, request.idempotencyKey);
        const next = refundScript.shift() ?? "real";
        if (next === "hang") return new Promise<RefundOutcome>(() => {});
        return next === "real" ? real.refund(request, signal) : next;
      },
      async refundStatus(ref: RefundRef): Promise<RefundOutcome> {
        count(statusCalls, ref.idempotencyKey);
        return statusScript.shift() ?? { kind: "pending", reference: ref.reference ?? "rfn_unknown" };
      },
    },
  };
}

/** A logger that keeps what was logged. */
function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const logger: Logger = {
    info: (fields, message) => void lines.push({ level: "info", fields, message }),
    warn: (fields, message) => void lines.push({ level: "warn", fields, message }),
    error: (fields, message) => void lines.push({ level: "error", fields, message }),
  };
  return { lines, logger };
}

describe("a processor that does not answer", () => {
  let server: TestServer;
  let script: ReturnType<typeof scriptedProcessor>;
  before(async () => {
    script = scriptedProcessor();
    server = await startTestServer({ processor: script.processor, processorTimeoutMs: 200 });
  });
  after(() => server.close());

  it("answers the refund pending at the processor timeout, its amount reserved, and the reconciler settles it later", async () => {
    const client = createRestClient(server);
    const intent = await paidIntent(client);
    script.refundScript.push("hang");
    const refund = expectRefund(await refundRoutes(client).create(intent.id, { amount: 300, clientReference: uniqueReference("hang") }), 201);
    assert.equal(refund.status, "pending");
    assert.equal(expectJson<PaymentIntentListItemJson>(await client.getIntent(intent.id), 200).amountRefunded, "300");
    const later = new Date(Date.now() + 3_600_000);
    assert.equal(await server.refundParts.reconciler.runOnce(later, new AbortController().signal), 1);
    assert.equal(expectRefund(await refundRoutes(client).get(refund.id), 200).status, "successful");
  });
});

describe("refunds left pending", () => {
  let server: TestServer;
  let client: RestClient;
  let refunds: RefundRoutes;
  let clock: ManualClock;
  let script: ReturnType<typeof scriptedProcessor>;
  const logs = recordingLogger();
  before(async () => {
    clock = createManualClock("2026-12-07T08:00:00.000Z");
    script = scriptedProcessor();
    server = await startTestServer({ clock, processor: script.processor, logger: logs.logger });
    client = createRestClient(server);
    refunds = refundRoutes(client);
  });
  after(() => server.close());
  beforeEach(() => {
    script.refundScript.length = 0;
    script.statusScript.length = 0;
  });

  const runReconciler = () => server.refundParts.reconciler.runOnce(clock.now(), new AbortController().signal);
  const readRefund = async (id: string) => expectRefund(await refunds.get(id), 200);
  const amountRefunded = async (id: string) => expectJson<PaymentIntentListItemJson>(await client.getIntent(id), 200).amountRefunded;

  describe("the reconciler", () => {
    it("asks the processor again, with the same key, about a refund whose answer never came, and settles it once", async () => {
      const intent = await paidIntent(client);
      script.refundScript.push({ kind: "unknown", reason: "timed out" });
      const refund = expectRefund(await refunds.create(intent.id, { amount: 4000, clientReference: uniqueReference("rc") }), 201);
      assert.equal(refund.status, "pending");
      assert.equal(await amountRefunded(intent.id), "4000", "a pending refund's amount stays reserved");
      assert.equal(await runReconciler(), 0, "not due yet: the first check waits");
      assert.equal(script.refundCalls.get(refund.id), 1);

      clock.advance(10_000);
      assert.equal(await runReconciler(), 1);
      assert.equal(script.refundCalls.get(refund.id), 2, "refund() again: the processor never gave a reference");
      const settled = await readRefund(refund.id);
      assert.deepEqual([settled.status, settled.updatedAt], ["successful", clock.iso()]);
      assert.equal(await amountRefunded(intent.id), "4000");

      clock.advance(3_600_000);
      assert.equal(await runReconciler(), 0);
      assert.equal(script.refundCalls.get(refund.id), 2, "a settled refund is never asked about again");
      const types = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${intent.id}&type=refund.succeeded`), 200);
      assert.equal(types.events.length, 1);
    });

    it("asks for the status of a refund the processor said it has, and gives a failed one's amount back", async () => {
      const intent = await paidIntent(client, { amount: 7000 });
      script.refundScript.push({ kind: "pending", reference: "rfn_later_1" });
      const refund = expectRefund(await refunds.create(intent.id, { clientReference: uniqueReference("rc") }), 201);
      assert.equal(refund.status, "pending");
      script.statusScript.push({ kind: "pending", reference: "rfn_later_1" });
      clock.advance(10_000);
      assert.equal(await runReconciler(), 0, "still pending at the processor");
      assert.equal(script.statusCalls.get(refund.id), 1);
      assert.equal((await readRefund(refund.id)).status, "pending");

      script.statusScript.push({ kind: "failed", reference: "rfn_later_1", reason: "The account is closed." });
      clock.advance(60_000);
      assert.equal(await runReconciler(), 1);
      assert.equal(script.refundCalls.get(refund.id), 1, "never refunded twice");
      const failed = await readRefund(refund.id);
      assert.deepEqual([failed.status, failed.failureReason], ["failed", "The account is closed."]);
      assert.equal(await amountRefunded(intent.id), "0");
      assert.ok(logs.lines.some((l) => l.level === "warn" && l.fields["refund"] === refund.id && /refundable again/.test(l.message)));
    });

    it("asks less often as a refund ages, never hot: an unknown answer with Retry-After waits at least that", async () => {
      const intent = await paidIntent(client);
      script.refundScript.push({ kind: "unknown", reason: "429", retryAfterMs: 120_000 });
      const refund = expectRefund(await refunds.create(intent.id, { amount: 1, clientReference: uniqueReference("rc") }), 201);
      clock.advance(60_000);
      assert.equal(await runReconciler(), 0);
      assert.equal(script.refundCalls.get(refund.id), 1, "Retry-After is honoured");
      clock.advance(60_000);
      assert.equal(await runReconciler(), 1);
      assert.equal(script.refundCalls.get(refund.id), 2);
    });
  });

  describe("processor notices", () => {
    it("settles a pending refund from a notice, once: the same notice again, or a late failure, changes nothing", async () => {
      const intent = await paidIntent(client);
      script.refundScript.push({ kind: "pending", reference: "rfn_notice_1" });
      const refund = expectRefund(await refunds.create(intent.id, { amount: 500, clientReference: uniqueReference("nt") }), 201);
      const notices = server.refundParts.notices;
      const success = { kind: "refund" as const, idempotencyKey: refund.id, outcome: { kind: "succeeded" as const, reference: "rfn_notice_1" }, noticeId: "evt_p_1" };
      await notices.onRefundNotice(success);
      const settled = await readRefund(refund.id);
      assert.equal(settled.status, "successful");
      await notices.onRefundNotice(success);
      await notices.onRefundNotice({ ...success, noticeId: "evt_p_2", outcome: { kind: "failed", reference: "rfn_notice_1", reason: "late" } });
      assert.deepEqual(await readRefund(refund.id), settled);
      assert.equal(await amountRefunded(intent.id), "500");
      const succeededEvents = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${intent.id}&type=refund.succeeded`), 200);
      assert.equal(succeededEvents.events.length, 1);
    });

    it("logs a notice about a refund it does not know and changes nothing", async () => {
      await server.refundParts.notices.onRefundNotice({ kind: "refund", idempotencyKey: "rf_unknown", outcome: { kind: "succeeded", reference: "x" }, noticeId: "evt_p_3" });
      assert.ok(logs.lines.some((l) => l.level === "warn" && l.fields["refund"] === "rf_unknown"));
    });
  });

  describe("late successes", () => {
    /**
     * Records a success for an intent that is no longer waiting for one, as
     * a late processor answer does: the attempt is begun, something outside
     * the lifecycle closes the intent meanwhile (close), and the processor's
     * success then settles the attempt as a late success.
     */
    async function lateSuccess(intent: PaymentIntentJson, close: (id: string) => Promise<void>): Promise<PaymentAttemptRecord> {
      const open: PaymentAttemptRecord = {
        id: `pa_late_${intent.id}`,
        paymentIntentId: intent.id,
        merchantId: "merchantA",
        amount: BigInt(intent.amount),
        method: "bank_transfer",
        outcome: "processing",
        processorReference: null,
        processor: "test",
        idempotencyKey: `pa_late_${intent.id}`,
        nextActionUrl: null,
        lateSuccess: null,
        declineReason: null,
        createdAt: clock.now(),
        settledAt: null,
      };
      assert.equal((await server.intents.beginAttempt(open, clock.now()))?.begun, true);
      await close(intent.id);
      const settled = await server.intents.settleAttempt("merchantA", open.id, { outcome: "succeeded", processorReference: `txn_late_${intent.id}` }, { at: clock.now(), maxAttempts: 3 });
      assert.equal(settled?.lateSuccess, "payment_after_close");
      return settled.attempt;
    }

    it("refunds a payment that succeeded after its intent expired, in full and once, leaving the intent expired with amountRefunded 0", async () => {
      const intent = expectJson<PaymentIntentJson>(
        await client.createIntent({ amount: 12000, customerEmail: "ada@example.com", clientReference: uniqueReference("late") }),
        201,
      );
      const attempt = await lateSuccess(intent, async (id) => {
        clock.advance(25 * 3_600_000);
        assert.ok(await server.intents.transition("merchantA", id, { from: "processing", to: "expired", at: clock.now() }));
      });
      const record = (await server.intents.findById("merchantA", intent.id))!;
      await server.refundParts.lateSuccess.onLateSuccess(record, attempt, "payment_after_close");
      await server.refundParts.lateSuccess.onLateSuccess(record, attempt, "payment_after_close");

      const listed = expectJson<{ refunds: RefundJson[] }>(await refunds.list(intent.id), 200).refunds;
      assert.equal(listed.length, 1);
      assert.deepEqual(
        [listed[0]!.amount, listed[0]!.status, listed[0]!.reason, listed[0]!.clientReference],
        ["12000", "successful", "payment_after_close", null],
      );
      const after = expectJson<PaymentIntentListItemJson>(await client.getIntent(intent.id), 200);
      assert.deepEqual([after.status, after.amountRefunded, after.transaction], ["expired", "0", null]);
      const events = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${intent.id}`), 200).events;
      assert.deepEqual(events.slice(0, 2).map((e) => [e.type, e.refund?.reason]), [
        ["refund.succeeded", "payment_after_close"],
        ["refund.created", "payment_after_close"],
      ]);
      const errors = logs.lines.filter((l) => l.level === "error" && l.fields["attempt"] === attempt.id);
      assert.equal(errors.length, 1, "one error line says the payment was refunded automatically");
      assert.equal(errors[0]!.fields["refund"], listed[0]!.id);
      // The merchant cannot refund the expired intent itself.
      assert.equal((await refunds.create(intent.id, { clientReference: uniqueReference("late") })).status, 409);
    });

    it("refunds a payment that succeeded after its intent was cancelled; the refund is readable by id", async () => {
      const intent = expectJson<PaymentIntentJson>(
        await client.createIntent({ amount: 3000, customerEmail: "ada@example.com", clientReference: uniqueReference("late") }),
        201,
      );
      const attempt = await lateSuccess(intent, async (id) => {
        assert.ok(await server.intents.transition("merchantA", id, { from: "processing", to: "pending", at: clock.now() }));
        assert.ok(await server.intents.cancel("merchantA", id, clock.now()));
      });
      await server.refundParts.lateSuccess.onLateSuccess((await server.intents.findById("merchantA", intent.id))!, attempt, "payment_after_close");
      const events = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${intent.id}&type=refund.succeeded`), 200).events;
      assert.equal(events.length, 1);
      const refund = await readRefund(events[0]!.refund!.id);
      assert.deepEqual([refund.amount, refund.status, refund.reason], ["3000", "successful", "payment_after_close"]);
      assert.equal(events[0]!.data!["status"], "cancelled");
    });
  });
});
