/**
 * The REST API's JSON, as the test server's helpers return it: amounts are
 * strings of digits (proto3 JSON's int64), times RFC 3339 UTC with
 * milliseconds, absent values null.
 */

/** §2.2: one allowed way to pay. */
export interface PaymentMethodJson {
  id: string;
  type: string;
  attributes: { name: string }[];
}

/** §2.4: a settlement account. */
export interface SettlementAccountJson {
  id: string;
  accountName: string;
  accountNumber: string;
  bankName: string;
  bankCode: string;
  createdAt: string;
  updatedAt: string;
}

/** A payment intent as GET {base_url}/v2/payment-intents/{id} returns it. */
export interface PaymentIntentJson {
  id: string;
  amount: string;
  totalAmount: string;
  currency: string;
  receiptEmail: string;
  customerEmail: string;
  country: string;
  status: "pending" | "successful" | "failed" | "expired" | "cancelled";
  checkoutLink: string;
  clientReference: string;
  paymentMethods: PaymentMethodJson[];
  callbackUrl: string | null;
  transaction: string | null;
  meta: unknown[];
  settlementAccount: SettlementAccountJson | null;
  createdAt: string;
  updatedAt: string;
  /** Kobo refunded or being refunded; "0" when none. */
  amountRefunded: string;
}

/** One attempt to pay an intent. */
export interface PaymentAttemptJson {
  id: string;
  paymentIntentId: string;
  amount: string;
  paymentMethod: string;
  outcome: "succeeded" | "declined";
  /** The processor's reference; a successful attempt's becomes the intent's transaction. */
  reference: string;
  declineReason: string | null;
  createdAt: string;
}

/** What the pay helper returns: the attempt, and the intent after it. */
export interface TestPaymentJson {
  attempt: PaymentAttemptJson;
  paymentIntent: PaymentIntentJson;
}

/** A merchant made by the createMerchant helper. */
export interface TestMerchantJson {
  merchantId: string;
  apiKey: string;
}

/** The body of every error answer. */
export interface ErrorJson {
  status: number;
  title: string;
  message: string;
}
