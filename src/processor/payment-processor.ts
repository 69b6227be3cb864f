import type { PaymentIntentRecord } from "../domain/payment-intent.js";

/**
 * The processor port: how the service moves money through a processor whose
 * answers come later and elsewhere (docs/payments.md, "The processor port").
 * Every call carries an idempotency key derived from our own id (the attempt
 * id for begin and status, the refund id for refund and refundStatus), so a
 * retry of the same call can never charge or refund twice. Adapters never
 * throw for the processor's own failures: a timeout (PROCESSOR_TIMEOUT_MS), a
 * 5xx, a network error or a 429 is `unknown`, and the reconciler asks again
 * later (a 429's Retry-After is honoured through retryAfterMs).
 */

/** Card details as the customer typed them, already checked for form. Never stored or logged. */
export interface CardDetails {
  /** Digits only. */
  number: string;
  expiryMonth: number;
  /** Four digits. */
  expiryYear: number;
  cvv: string;
}

/** What the checkout page shows for a method before the customer pays. */
export type PaymentInstructions =
  | { kind: "card" }
  | { kind: "bank_transfer"; accountNumber: string; bankName: string; accountName: string }
  | { kind: "ussd"; code: string }
  | {
      kind: "processor";
      processorName: string;
      /**
       * Where choosing it sends the customer (a Content-Security-Policy source,
       * such as https://*.paystack.com): the checkout page's form-action allows
       * it, since a browser checks the redirect after a form post against it.
       */
      redirectsTo?: string;
    };

/** What a processor says about one attempt to pay. */
export type AttemptOutcome =
  | { kind: "succeeded"; reference: string; amount: bigint; currency: string }
  | {
      kind: "declined";
      reference: string | null;
      reason: string;
      /**
       * Set when the processor took a different amount or currency than the
       * attempt's (reason "amount_mismatch"): the attempt is never paid, and
       * an operator must look (the adapter logs it at error).
       */
      mismatch?: { amount: bigint; currency: string };
    }
  | { kind: "pending"; reference: string } // the processor has it; the outcome comes later
  | { kind: "redirect"; reference: string; url: string } // the customer must act at url
  | { kind: "unknown"; reason: string; retryAfterMs?: number }; // timeout, 5xx, network, 429: stays processing

/** What a processor says about one refund. */
export type RefundOutcome =
  | { kind: "succeeded"; reference: string }
  | { kind: "failed"; reference: string | null; reason: string }
  | { kind: "pending"; reference: string }
  | { kind: "unknown"; reason: string; retryAfterMs?: number };

/** BeginAttempt asks the processor to take one attempt to pay. */
export interface BeginAttempt {
  idempotencyKey: string; // our attempt id
  paymentIntentId: string;
  merchantId: string;
  amount: bigint; // kobo
  currency: "NGN";
  method: string; // card, bank_transfer, ussd, or a processor name
  customerEmail: string;
  card?: CardDetails; // never stored or logged
  returnUrl: string; // where the processor sends the customer back: {PUBLIC_URL}/checkout/{token}/return?attempt={id}
}

/** AttemptRef names an attempt the processor already has (or may have). */
export interface AttemptRef {
  idempotencyKey: string;
  reference: string | null;
  amount: bigint;
  /**
   * How long the attempt has been open, on the service's clock (the
   * reconciler says): a processor whose customer may still be on its page
   * reads "not paid yet" by it. Unset: long enough for any answer to be final.
   */
  openForMs?: number;
  /** The customer is back from the processor's page (the return URL): "not paid" then means they left without paying. */
  customerReturned?: boolean;
}

/** RefundRequest gives back amount kobo of a paid attempt. */
export interface RefundRequest {
  idempotencyKey: string /* our refund id */;
  attempt: AttemptRef;
  amount: bigint;
}

/** RefundRef names a refund the processor already has (or may have). */
export interface RefundRef {
  idempotencyKey: string;
  reference: string | null;
}

/** A verified message from the processor's own webhook. */
export type ProcessorNotice =
  | { kind: "attempt"; idempotencyKey: string; outcome: AttemptOutcome; noticeId: string }
  | { kind: "refund"; idempotencyKey: string; outcome: RefundOutcome; noticeId: string }
  | { kind: "ignored"; reason: string }; // a type we do not use: answered 200, nothing changes

/**
 * PaymentProcessor is one processor's adapter (the test-mode processor,
 * Paystack). The ProcessorRegistry picks one per payment method; each attempt
 * stores the name of the processor that took it, so status checks, webhooks
 * and refunds go back to that one.
 */
export interface PaymentProcessor {
  readonly name: string; // "test", "paystack"; stored on each attempt
  readonly testMode: boolean;
  /** Methods this processor collects (card, bank_transfer, ussd, or its own name). */
  handles(method: string): boolean;
  instructions(intent: PaymentIntentRecord, method: string): PaymentInstructions;
  begin(request: BeginAttempt, signal: AbortSignal): Promise<AttemptOutcome>;
  status(ref: AttemptRef, signal: AbortSignal): Promise<AttemptOutcome>;
  /** Throws ProcessorWebhookRejected (→ 401, nothing changed) unless the processor's own signature verifies. */
  parseWebhook(headers: Record<string, string | string[] | undefined>, rawBody: Buffer): ProcessorNotice;
  refund(request: RefundRequest, signal: AbortSignal): Promise<RefundOutcome>;
  refundStatus(ref: RefundRef, signal: AbortSignal): Promise<RefundOutcome>;
}
