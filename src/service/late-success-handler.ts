import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { Logger } from "../lib/logger.js";

import type { LateSuccessReason } from "../domain/late-success.js";

export type { LateSuccessReason } from "../domain/late-success.js";

/**
 * LateSuccessHandler is told of every late success after it was recorded
 * (the attempt is `succeeded`, the intent kept its final status and its
 * transaction): the money was taken and must go back. The refunds service
 * implements it with a full automatic refund of the attempt; until then the
 * default logs at error and counts it in /metrics.
 */
export interface LateSuccessHandler {
  onLateSuccess(intent: PaymentIntentRecord, attempt: PaymentAttemptRecord, reason: LateSuccessReason): Promise<void>;
}

/**
 * createLoggingLateSuccessHandler is the default: an error-level line an
 * operator must act on (the attempt and intent ids and the reason; never the
 * customer's email or card) and a count (payments_late_successes_total).
 */
export function createLoggingLateSuccessHandler(deps: { logger: Logger; count?: (reason: LateSuccessReason) => void }): LateSuccessHandler {
  return {
    async onLateSuccess(intent, attempt, reason) {
      deps.count?.(reason);
      deps.logger.error(
        { merchantId: intent.merchantId, paymentIntentId: intent.id, attemptId: attempt.id, intentStatus: intent.status, amount: attempt.amount.toString(), reason },
        "a payment succeeded for an intent that no longer waited for it: refund it",
      );
    },
  };
}
