import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { AutomaticRefundReason } from "../domain/refund.js";

/**
 * Why a success is late: the intent had expired or been cancelled
 * (payment_after_close), or another attempt had already paid it
 * (duplicate_payment).
 */
export type LateSuccessReason = AutomaticRefundReason;

/**
 * LateSuccessHandler is told of a success recorded for an attempt whose
 * intent was no longer waiting for it: the money was taken and must go back.
 * Called after the success is committed; may be called again for the same
 * attempt (a retry, another instance), so it must be idempotent.
 */
export interface LateSuccessHandler {
  onLateSuccess(intent: PaymentIntentRecord, attempt: PaymentAttemptRecord, reason: LateSuccessReason): Promise<void>;
}
