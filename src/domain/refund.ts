import type { MetaEntry } from "./meta.js";

/** The statuses of a refund: pending until the processor's answer is committed, then final. */
export const refundStatuses = ["pending", "successful", "failed"] as const;

export type RefundStatus = (typeof refundStatuses)[number];

/** Why a merchant refunds; requested_by_customer when the request names none (the proto's field rule checks it). */
export const merchantRefundReasons = ["requested_by_customer", "duplicate", "fraudulent"] as const;

/**
 * Why the service refunds on its own: a payment that succeeded after its
 * intent had expired or been cancelled (payment_after_close), or after
 * another attempt had paid it (duplicate_payment). Only the service sets these.
 */
export const automaticRefundReasons = ["payment_after_close", "duplicate_payment"] as const;

export type MerchantRefundReason = (typeof merchantRefundReasons)[number];
export type AutomaticRefundReason = (typeof automaticRefundReasons)[number];
export type RefundReason = MerchantRefundReason | AutomaticRefundReason;

/**
 * RefundRecord is one refund as stored. A merchant's refund gives back part
 * of the payment that paid its intent and counts in the intent's
 * amountRefunded; an automatic one gives back a whole payment that did not
 * pay the intent (a late or duplicate one) and does not.
 */
export interface RefundRecord {
  /** "rf_" + UUIDv7: also the idempotency key of every processor call about it. */
  id: string;
  merchantId: string;
  /** Its payment intent's mode (issue 23, §1). */
  livemode: boolean;
  paymentIntentId: string;
  /** The payment attempt whose money goes back. */
  attemptId: string;
  /** Kobo, ≥ 1. */
  amount: bigint;
  status: RefundStatus;
  reason: RefundReason;
  /** The merchant's reference, unique per merchant forever; null for an automatic refund. */
  clientReference: string | null;
  /** SHA-256 of the request as sent: decides replay versus conflict. Null for an automatic refund. */
  requestFingerprint: string | null;
  /** Why a failed refund failed, as the processor said. */
  failureReason: string | null;
  /** The processor that took the attempt (and so refunds it). */
  processor: string;
  /** The processor's reference for the refund, once it has given one. */
  processorReference: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** When the reconciler next asks the processor about a pending refund; null once final. */
  checkAfter: Date | null;
  /** The merchant's own data, in the order given at create; [] when none (and for an automatic refund). */
  meta: MetaEntry[];
}

/** isAutomaticRefund tells the service's own refunds (of a payment that did not pay the intent) from a merchant's. */
export function isAutomaticRefund(refund: Pick<RefundRecord, "reason">): boolean {
  return (automaticRefundReasons as readonly string[]).includes(refund.reason);
}
