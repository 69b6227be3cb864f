import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { PaymentAttemptRecord } from "../../src/domain/payment-attempt.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import type { Logger } from "../../src/lib/logger.js";
import type { AttemptOutcome } from "../../src/processor/payment-processor.js";
import { createTestModeProcessor, testCards, type TestModeProcessor } from "../../src/processor/test-mode-processor.js";
import { createAttemptReconciler } from "../../src/service/attempt-reconciler.js";
import { createSettleAttempt } from "../../src/service/attempt-settler.js";
import { createLoggingLateSuccessHandler } from "../../src/service/late-success-handler.js";
import { ignorePaymentEvents } from "../../src/service/payment-events.js";
import type { Reconcilable } from "../../src/service/reconcilable.js";
import { createMemoryPaymentIntentStore } from "../../src/store/memory/memory-payment-intent-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import { intentRecord } from "../store/contract-records.js";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";

const hour = 3_600_000;

describe("attempt reconciler", () => {
  let clock: ManualClock;
  let intents: PaymentIntentStore;
  let processor: TestModeProcessor;
  let outage: boolean;
  let errors: string[];
  let alarms: number;
  let reconciler: Reconcilable;

  beforeEach(() => {
    clock = createManualClock("2026-01-10T09:00:00.000Z");
    intents = createMemoryPaymentIntentStore();
    processor = createTestModeProcessor();
    outage = false;
    errors = [];
    alarms = 0;
    const logger: Logger = { info() {}, warn() {}, error: (_fields, message) => void errors.push(message) };
    const settle = createSettleAttempt({ intents, lateSuccess: createLoggingLateSuccessHandler({ logger }), events: ignorePaymentEvents, clock, logger, maxAttempts: 3 });
    const down = { status: async (): Promise<AttemptOutcome> => Promise.reject(new Error("connection refused")) };
    reconciler = createAttemptReconciler({
      intents,
      processors: { get: (name) => (name === "test" ? (outage ? down : processor) : undefined) },
      settle,
      logger,
      processorTimeoutMs: 1_000,
      alarmAfterMs: hour,
      onAlarm: () => void (alarms += 1),
    });
  });

  /** An intent with an attempt the test processor took (card), whose answer never came back: processing, due now. */
  async function lostAnswer(n: number, card: string = testCards.timesOut): Promise<PaymentAttemptRecord> {
    const now = clock.now();
    const intent = intentRecord({ id: `pi_${n}`, merchantId: "m1", clientReference: `r${n}`, createdAt: now, updatedAt: now, expiresAt: new Date(now.getTime() + 24 * hour) });
    await intents.insert(intent);
    const ids = createIdGenerator(clock);
    const id = ids.paymentAttemptId();
    const attempt: PaymentAttemptRecord = {
      id, paymentIntentId: intent.id, merchantId: "m1", amount: intent.amount, method: "card", outcome: "processing", processor: "test",
      idempotencyKey: id, processorReference: null, nextActionUrl: null, declineReason: null, lateSuccess: null, createdAt: now, settledAt: null,
    };
    assert.equal((await intents.beginAttempt(attempt, now))?.begun, true);
    const answer = await processor.begin(
      { idempotencyKey: id, paymentIntentId: intent.id, merchantId: "m1", amount: intent.amount, currency: "NGN", method: "card", customerEmail: intent.customerEmail, card: { number: card, expiryMonth: 12, expiryYear: 2039, cvv: "123" }, returnUrl: "http://127.0.0.1/return" },
      AbortSignal.timeout(1_000),
    );
    if (card === testCards.timesOut) assert.equal(answer.kind, "unknown");
    return attempt;
  }

  it("settles an attempt whose answer was lost as the processor says, once", async () => {
    const attempt = await lostAnswer(1);
    assert.equal(await reconciler.runOnce(clock.now(), new AbortController().signal), 1);
    const after = await intents.findAttempt("m1", attempt.id);
    assert.equal(after?.outcome, "succeeded");
    assert.equal((await intents.findById("m1", attempt.paymentIntentId))?.status, "successful");
    assert.equal(await reconciler.runOnce(new Date(clock.now().getTime() + hour), new AbortController().signal), 0);
    assert.deepEqual([...processor.charges()], [[attempt.id, 1]]);
  });

  it("keeps attempts processing through a processor outage, and settles them all after it", async () => {
    const attempts = await Promise.all([1, 2, 3].map((n) => lostAnswer(n)));
    outage = true;
    assert.equal(await reconciler.runOnce(clock.now(), new AbortController().signal), 0);
    for (const a of attempts) assert.equal((await intents.findAttempt("m1", a.id))?.outcome, "processing");
    // Backed off: not due again at once.
    assert.equal(await reconciler.runOnce(clock.now(), new AbortController().signal), 0);
    outage = false;
    clock.advance(60_000);
    assert.equal(await reconciler.runOnce(clock.now(), new AbortController().signal), 3);
    for (const a of attempts) assert.equal((await intents.findById("m1", a.paymentIntentId))?.status, "successful");
  });

  it("declines an attempt the processor never received (no money moved)", async () => {
    const now = clock.now();
    const intent = intentRecord({ id: "pi_9", merchantId: "m1", clientReference: "r9", createdAt: now, updatedAt: now, expiresAt: new Date(now.getTime() + hour) });
    await intents.insert(intent);
    const attempt: PaymentAttemptRecord = {
      id: "pa_lost", paymentIntentId: intent.id, merchantId: "m1", amount: intent.amount, method: "card", outcome: "processing", processor: "test",
      idempotencyKey: "pa_lost", processorReference: null, nextActionUrl: null, declineReason: null, lateSuccess: null, createdAt: now, settledAt: null,
    };
    await intents.beginAttempt(attempt, now);
    assert.equal(await reconciler.runOnce(now, new AbortController().signal), 1);
    assert.equal((await intents.findAttempt("m1", "pa_lost"))?.outcome, "declined");
    assert.equal((await intents.findById("m1", intent.id))?.status, "pending");
  });

  it("raises an alarm once for an attempt open longer than PROCESSING_ALARM_AFTER", async () => {
    await lostAnswer(1, testCards.needs3ds);
    clock.advance(hour + 1);
    await reconciler.runOnce(clock.now(), new AbortController().signal);
    await reconciler.runOnce(clock.now(), new AbortController().signal);
    assert.equal(alarms, 1);
    assert.equal(errors.filter((m) => /PROCESSING_ALARM_AFTER/.test(m)).length, 1);
  });
});
