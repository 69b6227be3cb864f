import type { Clock } from "../lib/clock.js";
import type { Logger } from "../lib/logger.js";
import type { AttemptOutcome } from "../processor/payment-processor.js";
import type { AttemptSettlement, PaymentIntentStore } from "../store/payment-intent-store.js";
import type { LateSuccessHandler } from "./late-success-handler.js";
import type { PaymentEvents } from "./payment-events.js";
import type { SettleAttempt } from "./settle-attempt.js";

export interface AttemptSettlerDeps {
  intents: PaymentIntentStore;
  lateSuccess: LateSuccessHandler;
  events: PaymentEvents;
  clock: Clock;
  logger: Logger;
  /** Declined attempts after which the intent fails: MAX_PAYMENT_ATTEMPTS. */
  maxAttempts: number;
}

/**
 * When the reconciler asks about an open attempt again, by its age: soon at
 * first (most outcomes come within minutes), then less often, at most every
 * 15 minutes; a processor's Retry-After stretches it.
 */
export function nextAttemptCheckMs(ageMs: number): number {
  if (ageMs < 5 * 60_000) return 30_000;
  if (ageMs < 60 * 60_000) return 5 * 60_000;
  return 15 * 60_000;
}

/**
 * createSettleAttempt builds the one SettleAttempt every path calls (the
 * checkout after begin, the return URL, the processor's webhook, the
 * reconciler, the test helpers). A final outcome or a redirect is committed
 * by the store's settleAttempt, once, in its own short transaction; pending
 * and unknown keep the attempt open (with the processor's reference, once
 * given) until the reconciler's next check. A late success is handed to the
 * LateSuccessHandler after its commit.
 */
export function createSettleAttempt(deps: AttemptSettlerDeps): SettleAttempt {
  const { intents, clock, logger } = deps;
  return async (key, reported, options) => {
    const attempt = await intents.findAttempt(key.merchantId, key.attemptId);
    if (!attempt) return undefined;
    // The money check, for every processor and path: a success for another amount or currency is never paid.
    const outcome = checkedAmount(reported, attempt.amount);
    const now = clock.now();
    // A redirect the customer has not followed yet is news of nothing: the attempt waits for its next check.
    const settlement = outcome.kind === "redirect" && attempt.outcome === "requires_action" ? undefined : settlementOf(outcome);
    if (!settlement) {
      const retryAfterMs = outcome.kind === "unknown" ? (outcome.retryAfterMs ?? 0) : 0;
      const checkAfter = new Date(now.getTime() + Math.max(nextAttemptCheckMs(now.getTime() - attempt.createdAt.getTime()), retryAfterMs));
      const reference = outcome.kind === "pending" || outcome.kind === "redirect" ? outcome.reference : null;
      await intents.postponeAttempt(key.merchantId, key.attemptId, { checkAfter, processorReference: reference, leaseToken: options.leaseToken });
      if (outcome.kind === "unknown") logger.warn({ attempt: attempt.id, source: options.source, reason: outcome.reason }, "a payment attempt's outcome is unknown: it stays processing");
      const intent = await intents.findById(key.merchantId, attempt.paymentIntentId);
      const after = await intents.findAttempt(key.merchantId, key.attemptId);
      return intent && after && { intent, attempt: after, changed: false };
    }
    if (outcome !== reported && reported.kind === "succeeded") {
      logger.error(
        { attempt: attempt.id, processor: attempt.processor, expected: attempt.amount.toString(), paid: reported.amount.toString(), currency: reported.currency, source: options.source },
        "the processor reports a payment of another amount or currency than the attempt's: declined amount_mismatch, never paid; refund it at the processor",
      );
    }
    const checkAfter = new Date(now.getTime() + nextAttemptCheckMs(now.getTime() - attempt.createdAt.getTime()));
    const settled = await intents.settleAttempt(key.merchantId, key.attemptId, settlement, {
      at: now,
      maxAttempts: deps.maxAttempts,
      leaseToken: options.leaseToken,
      checkAfter,
    });
    if (!settled) return undefined;
    if (settled.changed) {
      logger.info({ attempt: attempt.id, paymentIntent: attempt.paymentIntentId, outcome: settled.attempt.outcome, source: options.source }, "payment attempt settled");
    }
    // The intent waited in the status its open attempt names.
    const before = attempt.outcome === "requires_action" ? "requires_action" : "processing";
    if (settled.changed && !settled.lateSuccess && settled.intent.status !== before) {
      deps.events.transitioned(key.merchantId, settled.intent.id, before, settled.intent.status);
    }
    if (settled.lateSuccess) {
      try {
        await deps.lateSuccess.onLateSuccess(settled.intent, settled.attempt, settled.lateSuccess);
      } catch (error) {
        // The late success is recorded; the refund's own reconciliation picks it up if it was reserved.
        logger.error({ attempt: attempt.id, err: error instanceof Error ? error.message : String(error) }, "handling a late success failed");
      }
    }
    return settled;
  };
}

/** checkedAmount turns a success for another amount than the attempt's, or not in NGN, into a decline (reason amount_mismatch). */
function checkedAmount(outcome: AttemptOutcome, amount: bigint): AttemptOutcome {
  if (outcome.kind !== "succeeded" || (outcome.amount === amount && outcome.currency === "NGN")) return outcome;
  return { kind: "declined", reference: outcome.reference, reason: "amount_mismatch", mismatch: { amount: outcome.amount, currency: outcome.currency } };
}

/** The store's settlement for a processor's final answer or redirect; undefined: the attempt stays open. */
function settlementOf(outcome: AttemptOutcome): AttemptSettlement | undefined {
  switch (outcome.kind) {
    case "succeeded":
      return { outcome: "succeeded", processorReference: outcome.reference };
    case "declined":
      return { outcome: "declined", processorReference: outcome.reference, declineReason: outcome.reason };
    case "redirect":
      return { outcome: "requires_action", processorReference: outcome.reference, url: outcome.url };
    case "pending":
    case "unknown":
      return undefined;
  }
}
