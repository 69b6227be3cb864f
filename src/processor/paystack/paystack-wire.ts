/**
 * The few Paystack request and response shapes the adapter sends and reads,
 * written from Paystack's OpenAPI description (schemas named beside each;
 * PaystackOSS/openapi, read in place, never copied) and only the fields we
 * use. test/processor/paystack-contract.test.ts holds every request the
 * adapter sends, and every answer the stand-in gives, to that description.
 * Webhook events are not in the description; their shape is Paystack's
 * webhook documentation: `{ event, data }`, data mirroring the REST resource.
 */

/** TransactionInitialize (POST /transaction/initialize). Amount in kobo. */
export interface InitializeBody {
  email: string;
  amount: number;
  currency: "NGN";
  reference: string;
  callback_url: string;
  /** amount_kobo: what we asked for, so a signed charge.success can be checked against it without a lookup. */
  metadata: { payment_intent_id: string; amount_kobo: string };
}

/** Every Paystack answer: `status` false with a `message` on an error (schema Error). */
export interface PaystackEnvelope<T> {
  status: boolean;
  message: string;
  data?: T;
}

/** TransactionInitializeResponse.data. */
export interface InitializeData {
  authorization_url: string;
  access_code: string;
  reference: string;
}

/** VerifyResponse.data, the fields we read. `status`: success, failed, abandoned, reversed, ongoing, pending, … */
export interface TransactionData {
  id: number;
  status: string;
  reference: string;
  amount: number;
  currency: string;
  gateway_response?: string;
  /** Ours, as given at initialize; an object, or its JSON text. */
  metadata?: unknown;
}

/** RefundCreate (POST /refund). `merchant_note` carries our refund id (see paystack-refund-note.ts). */
export interface RefundBody {
  transaction: string;
  amount: number;
  currency: "NGN";
  merchant_note: string;
}

/** RefundCreateResponse.data, RefundFetchResponse.data and RefundListResponseArray: the fields we read. */
export interface RefundData {
  id: number;
  status: string; // pending, processing, needs-attention, processed, failed
  amount: number;
  currency: string;
  merchant_note?: string;
  transaction_reference?: string;
  /** On a created refund: the refunded transaction. */
  transaction?: number | { reference?: string };
}

/** RefundListResponse.meta. */
export interface PageMeta {
  page: number;
  pageCount: number;
}

/** A webhook event: `{ "event": "charge.success", "data": {...} }`. */
export interface PaystackEvent {
  event: string;
  data: Record<string, unknown>;
}
