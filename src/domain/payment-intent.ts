import type { MetaEntry } from "./meta.js";

/**
 * The statuses a payment intent moves through (docs/payments.md, The payment
 * lifecycle). Only "pending" exists at creation; "processing" while an
 * attempt's outcome is not known, "requires_action" while the customer must
 * act at the processor; "cancelled" is what delete does (§4.3). The last
 * four are final.
 */
export const paymentIntentStatuses = ["pending", "processing", "requires_action", "successful", "failed", "expired", "cancelled"] as const;

export type PaymentIntentStatus = (typeof paymentIntentStatuses)[number];

/** isPaymentIntentStatus tells whether a string names a status. */
export function isPaymentIntentStatus(value: string): value is PaymentIntentStatus {
  return (paymentIntentStatuses as readonly string[]).includes(value);
}

/** SettlementSplit sends part of a payment to one settlement account (§2.3). */
export interface SettlementSplit {
  settlementAccountId: string;
  /** Kobo; an integer ≥ 1. */
  splitAmount: bigint;
}

/**
 * PaymentIntentRecord is a payment intent as stored. Money is bigint kobo so
 * no amount ever passes through a float.
 */
export interface PaymentIntentRecord {
  id: string;
  merchantId: string;
  /** Made with a live key (issue 23, §1): only live keys see it, and only a live processor may charge it. */
  livemode: boolean;
  amount: bigint;
  totalAmount: bigint;
  currency: "NGN";
  country: "NG";
  customerEmail: string;
  receiptEmail: string;
  status: PaymentIntentStatus;
  clientReference: string;
  /** Names from the payment-method catalogue, in the order the client gave. */
  paymentMethods: string[];
  callbackUrl: string | null;
  transaction: string | null;
  /** Where the customer must go to finish paying: set exactly while the status is requires_action. */
  nextActionUrl: string | null;
  splits: SettlementSplit[];
  /** The merchant's own data, in the order given at create; [] when none. */
  meta: MetaEntry[];
  /** The secret in checkoutLink. */
  checkoutToken: string;
  /** SHA-256 of the normalised create request: decides replay versus conflict. */
  requestFingerprint: string;
  createdAt: Date;
  updatedAt: Date;
  /** When a still-pending intent becomes expired: createdAt + CHECKOUT_TTL, fixed at creation. */
  expiresAt: Date;
  /**
   * When delete ran. Status alone says an intent was deleted: delete is the
   * only way to "cancelled" (§4.3), and a cancelled intent stays stored for
   * audit but leaves the API; the database's payment_intents_deleted_is_cancelled
   * constraint keeps the two together.
   */
  deletedAt: Date | null;
  /**
   * Kobo of the paying attempt's refunds that are pending or successful:
   * raised when a refund is reserved, lowered when one fails, never above
   * amount. 0n until the first refund.
   */
  amountRefunded: bigint;
}
