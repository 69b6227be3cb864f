import type { PaymentIntentStatus } from "../domain/payment-intent.js";

/**
 * PaymentEvents is told what happened to payment intents, after it happened:
 * the seam where metrics (and later webhooks) observe the service without the
 * service knowing about them. Implementations must not throw.
 */
export interface PaymentEvents {
  /** A new intent was stored (not an idempotent replay). */
  created(merchantId: string, intentId: string, amount: bigint): void;
  /** An intent moved from one status to another. */
  transitioned(merchantId: string, intentId: string, from: PaymentIntentStatus, to: PaymentIntentStatus): void;
}

/** ignorePaymentEvents is the default: nobody is listening. */
export const ignorePaymentEvents: PaymentEvents = { created() {}, transitioned() {} };
