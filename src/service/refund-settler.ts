import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { RefundRecord } from "../domain/refund.js";
import type { Clock } from "../lib/clock.js";
import type { Logger } from "../lib/logger.js";
import type { AttemptRef, PaymentProcessor, RefundOutcome } from "../processor/payment-processor.js";
import type { RefundStore } from "../store/refund-store.js";

/**
 * When a pending refund is asked about again, by its age: soon while the
 * processor is likely still at it, then less and less often, at most every
 * 15 minutes.
 */
const checkSchedule: readonly { beforeAgeMs: number; delayMs: number }[] = [
  { beforeAgeMs: 60_000, delayMs: 10_000 },
  { beforeAgeMs: 5 * 60_000, delayMs: 30_000 },
  { beforeAgeMs: 30 * 60_000, delayMs: 60_000 },
  { beforeAgeMs: 2 * 3_600_000, delayMs: 5 * 60_000 },
];
const longestCheckDelayMs = 15 * 60_000;

/** nextCheckDelayMs is how long a refund of this age stays pending before the reconciler asks again. */
export function nextCheckDelayMs(ageMs: number): number {
  return checkSchedule.find((step) => ageMs < step.beforeAgeMs)?.delayMs ?? longestCheckDelayMs;
}

/** attemptRefOf is what a processor needs to know of the payment a refund gives back. */
export function attemptRefOf(attempt: PaymentAttemptRecord): AttemptRef {
  return { idempotencyKey: attempt.id, reference: attempt.processorReference, amount: attempt.amount };
}

/**
 * RefundSettler is the one way a refund moves after its reservation,
 * whoever learnt the processor's answer (the request that made it, the
 * reconciler, a processor webhook): a final answer settles it (a
 * compare-and-set, so twice changes nothing and a late failure never undoes
 * a success), anything else keeps it pending until the next check.
 */
export interface RefundSettler {
  /**
   * Asks the processor about a pending refund, outside any transaction, and
   * commits its answer: refund() while the processor has given no reference
   * for it (a repeat is safe: the refund id is the idempotency key), else
   * refundStatus(). Answers the refund as it is afterwards.
   */
  ask(refund: RefundRecord, attempt: AttemptRef, signal: AbortSignal, leaseToken?: string): Promise<RefundRecord>;
  /** Commits an answer about a refund. Answers the refund afterwards; undefined when it no longer exists. */
  apply(refund: RefundRecord, outcome: RefundOutcome, leaseToken?: string): Promise<RefundRecord | undefined>;
}

/** RefundingProcessor is the part of the processor port refunds use. */
export type RefundingProcessor = Pick<PaymentProcessor, "name" | "refund" | "refundStatus">;

/** The processors by name (the registry's get): a refund goes to the processor named on it, the one that took the payment. */
export interface RefundingProcessors {
  get(name: string): RefundingProcessor | undefined;
}

export interface RefundSettlerDeps {
  refunds: RefundStore;
  processors: RefundingProcessors;
  clock: Clock;
  logger: Logger;
}

/** createRefundSettler asks the processor and commits its answers through the refund store. */
export function createRefundSettler(deps: RefundSettlerDeps): RefundSettler {
  const { refunds, processors, clock, logger } = deps;

  async function apply(refund: RefundRecord, outcome: RefundOutcome, leaseToken?: string): Promise<RefundRecord | undefined> {
    const now = clock.now();
    switch (outcome.kind) {
      case "succeeded":
      case "failed": {
        const settled = await refunds.settle(refund.merchantId, refund.id, {
          status: outcome.kind === "succeeded" ? "successful" : "failed",
          at: now,
          processorReference: outcome.reference,
          failureReason: outcome.kind === "failed" ? outcome.reason : undefined,
          leaseToken,
        });
        if (settled && outcome.kind === "failed") {
          logger.warn({ refund: refund.id, paymentIntent: refund.paymentIntentId, reason: outcome.reason }, "the processor failed a refund: its amount is refundable again");
        }
        return settled?.refund ?? refunds.findById(refund.merchantId, refund.id);
      }
      case "pending":
      case "unknown": {
        const delayMs = Math.max(nextCheckDelayMs(now.getTime() - refund.createdAt.getTime()), outcome.kind === "unknown" ? (outcome.retryAfterMs ?? 0) : 0);
        await refunds.postpone(refund.merchantId, refund.id, {
          checkAfter: new Date(now.getTime() + delayMs),
          processorReference: outcome.kind === "pending" ? outcome.reference : null,
          leaseToken,
        });
        if (outcome.kind === "unknown") logger.warn({ refund: refund.id, reason: outcome.reason }, "the processor's answer about a refund is unknown: it stays pending");
        return refunds.findById(refund.merchantId, refund.id);
      }
    }
  }

  return {
    async ask(refund, attempt, signal, leaseToken) {
      const processor = processors.get(refund.processor);
      if (!processor) {
        logger.error({ refund: refund.id, processor: refund.processor }, "a refund's processor is not configured: it stays pending");
        return (await apply(refund, { kind: "unknown", reason: `no processor named ${refund.processor}` }, leaseToken)) ?? refund;
      }
      const call =
        refund.processorReference === null
          ? processor.refund({ idempotencyKey: refund.id, attempt, amount: refund.amount }, signal)
          : processor.refundStatus({ idempotencyKey: refund.id, reference: refund.processorReference }, signal);
      let outcome: RefundOutcome;
      try {
        // An adapter answers its processor's failures as unknown, by the signal's deadline; one that does not is not waited for.
        outcome = await Promise.race([call, aborted(signal)]);
      } catch (error) {
        outcome = { kind: "unknown", reason: error instanceof Error ? error.message : String(error) };
      }
      return (await apply(refund, outcome, leaseToken)) ?? refund;
    },
    apply,
  };
}

/** aborted resolves as an unknown outcome when signal aborts (the processor timeout, the service stopping). */
function aborted(signal: AbortSignal): Promise<RefundOutcome> {
  const unknown = (): RefundOutcome => ({ kind: "unknown", reason: "no answer from the processor in time" });
  if (signal.aborted) return Promise.resolve(unknown());
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(unknown()), { once: true }));
}
