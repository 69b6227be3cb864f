import type { Logger } from "../lib/logger.js";
import type { AttemptOutcome, PaymentProcessor } from "../processor/payment-processor.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { Reconcilable } from "./reconcilable.js";
import type { SettleAttempt } from "./settle-attempt.js";

export interface AttemptReconcilerDeps {
  intents: PaymentIntentStore;
  /** The processors by name: an attempt is asked about at the processor that took it. */
  processors: { get(name: string): Pick<PaymentProcessor, "status"> | undefined };
  settle: SettleAttempt;
  logger: Logger;
  /** Bounds each processor call; an answer that does not come in time is unknown, and asked again later. */
  processorTimeoutMs: number;
  /** PROCESSING_ALARM_AFTER: an attempt open longer is logged at error and counted, once. */
  alarmAfterMs: number;
  /** Counts each alarm (payments_processing_alarms_total). */
  onAlarm?: () => void;
  /** Most attempts claimed per round; default 32. */
  batchSize?: number;
  /** Processor calls in flight at once; default 8. */
  concurrency?: number;
}

const defaultBatchSize = 32;
const defaultConcurrency = 8;

/**
 * createAttemptReconciler settles payment attempts whose outcome did not come
 * back: a timeout, an outage, a crash between begin and outcome, a customer
 * who never came back from the 3-D Secure page. Each round claims the open
 * attempts due (leased and fenced across instances: a settlement under a
 * lease that is no longer the attempt's changes nothing), asks the processor
 * that took each one for its status, and settles it through the one
 * SettleAttempt (source "reconciler"); pending and unknown answers keep it
 * open until its next check, which backs off with the attempt's age and
 * honours a processor's Retry-After. Attempts open longer than
 * PROCESSING_ALARM_AFTER are logged at error once and counted.
 */
export function createAttemptReconciler(deps: AttemptReconcilerDeps): Reconcilable {
  const batchSize = deps.batchSize ?? defaultBatchSize;
  const concurrency = deps.concurrency ?? defaultConcurrency;
  return {
    name: "payment attempts",
    async runOnce(now, signal) {
      for (const attempt of await deps.intents.alarmOpenAttempts(new Date(now.getTime() - deps.alarmAfterMs), batchSize)) {
        deps.onAlarm?.();
        deps.logger.error(
          { attempt: attempt.id, paymentIntent: attempt.paymentIntentId, processor: attempt.processor, outcome: attempt.outcome, since: attempt.createdAt.toISOString() },
          "a payment attempt has been open longer than PROCESSING_ALARM_AFTER: check it with the processor",
        );
      }
      // A claim outlasts the round's processor calls, so only a hung instance's claims pass to another.
      const leaseMs = (Math.ceil(batchSize / concurrency) + 1) * deps.processorTimeoutMs;
      const claimed = await deps.intents.claimDueAttempts(now, batchSize, leaseMs);
      let settled = 0;
      for (let start = 0; start < claimed.length && !signal.aborted; start += concurrency) {
        const wave = claimed.slice(start, start + concurrency).map(async ({ attempt, leaseToken }) => {
          const processor = deps.processors.get(attempt.processor);
          let outcome: AttemptOutcome;
          if (!processor) {
            deps.logger.error({ attempt: attempt.id, processor: attempt.processor }, "a payment attempt's processor is not configured: it stays open");
            outcome = { kind: "unknown", reason: `no processor named ${attempt.processor}` };
          } else {
            outcome = await ask(processor, attempt, now, AbortSignal.any([signal, AbortSignal.timeout(deps.processorTimeoutMs)]));
          }
          const after = await deps.settle({ merchantId: attempt.merchantId, attemptId: attempt.id }, outcome, { source: "reconciler", leaseToken });
          if (after?.changed) settled += 1;
        });
        await Promise.all(wave);
      }
      return settled;
    },
  };
}

/** Asks a processor for an attempt's status; no answer by the signal (or a throw) is unknown. */
async function ask(
  processor: Pick<PaymentProcessor, "status">,
  attempt: { idempotencyKey: string; processorReference: string | null; amount: bigint; createdAt: Date },
  now: Date,
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  const unknown = (reason: string): AttemptOutcome => ({ kind: "unknown", reason });
  const aborted = new Promise<AttemptOutcome>((resolve) => {
    if (signal.aborted) resolve(unknown("no answer from the processor in time"));
    signal.addEventListener("abort", () => resolve(unknown("no answer from the processor in time")), { once: true });
  });
  try {
    return await Promise.race([processor.status({ idempotencyKey: attempt.idempotencyKey, reference: attempt.processorReference, amount: attempt.amount, openForMs: now.getTime() - attempt.createdAt.getTime() }, signal), aborted]);
  } catch (error) {
    return unknown(error instanceof Error ? error.message : String(error));
  }
}
