/** What a processor said about one attempt to pay. */
export type PaymentAttemptOutcome = "succeeded" | "declined";

/**
 * PaymentAttemptRecord is one try by the customer to pay an intent. Kept for
 * every attempt, successful or not; never holds card data.
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
  /** The processor's reference; becomes the intent's transaction on success. */
  processorReference: string;
  /** Why a declined attempt was declined, as the customer may read it. */
  declineReason: string | null;
  createdAt: Date;
}
