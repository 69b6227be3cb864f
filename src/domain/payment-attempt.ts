import type { LateSuccessReason } from "./late-success.js";

/**
 * Where a payment attempt stands. `processing`: a processor has it (or may
 * have it) and its outcome is not known yet; `requires_action`: the customer
 * must act at the processor (a 3-D Secure page). Both are open: the
 * reconciler asks the processor about them until they settle. `succeeded`
 * and `declined` are final and never change.
 */
export const paymentAttemptOutcomes = ["processing", "requires_action", "succeeded", "declined"] as const;

export type PaymentAttemptOutcome = (typeof paymentAttemptOutcomes)[number];

/** The outcomes an attempt keeps for good once it has one. */
export type FinalAttemptOutcome = "succeeded" | "declined";

/** isOpenAttempt tells whether an attempt's outcome is still to come. */
export function isOpenAttempt(outcome: PaymentAttemptOutcome): outcome is "processing" | "requires_action" {
  return outcome === "processing" || outcome === "requires_action";
}

/**
 * PaymentAttemptRecord is one try by the customer to pay an intent, recorded
 * (processing) before its processor is called and settled once afterwards.
 * Kept for every attempt; never holds card data.
 */
export interface PaymentAttemptRecord {
  id: string;
  paymentIntentId: string;
  merchantId: string;
  /** Kobo charged (or refused): the intent's amount at the time. */
  amount: bigint;
  /** The payment method name: card, bank_transfer, ussd or a processor. */
  method: string;
  outcome: PaymentAttemptOutcome;
  /** The name of the processor that took it: status checks, webhooks and refunds go back to that one. */
  processor: string;
  /** What every processor call about this attempt carries, so a retry never charges twice: the attempt id. */
  idempotencyKey: string;
  /** The processor's reference, once it gave one; becomes the intent's transaction on success. */
  processorReference: string | null;
  /** Where the customer must go while the attempt requires action. */
  nextActionUrl: string | null;
  /** Why a declined attempt was declined, as the customer may read it. */
  declineReason: string | null;
  /**
   * Set on a success that came after its intent stopped waiting for it (the
   * intent kept its final status): the money goes back automatically.
   */
  lateSuccess: LateSuccessReason | null;
  createdAt: Date;
  /** When it became succeeded or declined; null while open. */
  settledAt: Date | null;
}
