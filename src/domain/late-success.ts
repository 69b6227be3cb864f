/**
 * Why a success arrived for an intent that was no longer waiting for it:
 * the intent had expired, been cancelled or failed (payment_after_close), or
 * another attempt had already paid it (duplicate_payment).
 */
export const lateSuccessReasons = ["payment_after_close", "duplicate_payment"] as const;

export type LateSuccessReason = (typeof lateSuccessReasons)[number];
