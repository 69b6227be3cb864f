import type { PaymentAttemptOutcome } from "../domain/payment-attempt.js";

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
  | { kind: "processor"; processorName: string };

export interface ChargeRequest {
  paymentIntentId: string;
  amount: bigint;
  method: string;
  /** Present for card. */
  card?: CardDetails;
}

export interface ChargeResult {
  outcome: PaymentAttemptOutcome;
  /** The processor's reference for this attempt, unique across attempts. */
  reference: string;
  /** For a declined attempt: a reason the customer may read. */
  declineReason?: string;
}

export type AttemptOutcome =
  | { kind: "succeeded"; reference: string; amount: bigint; currency: string }
  | { kind: "declined"; reference: string | null; reason: string }
  | { kind: "pending"; reference: string }            // the processor has it; the outcome comes later
  | { kind: "redirect"; reference: string; url: string } // the customer must act at url
  | { kind: "unknown"; reason: string; retryAfterMs?: number }; // timeout, 5xx, network, 429: stays processing

export type RefundOutcome =
  | { kind: "succeeded"; reference: string }
  | { kind: "failed"; reference: string | null; reason: string }
  | { kind: "pending"; reference: string }
  | { kind: "unknown"; reason: string; retryAfterMs?: number };

export interface AttemptRef { idempotencyKey: string; reference: string | null; amount: bigint }
export interface RefundRequest { idempotencyKey: string /* our refund id */; attempt: AttemptRef; amount: bigint }
export interface RefundRef { idempotencyKey: string; reference: string | null }

/** A verified message from the processor's own webhook. */
export type ProcessorNotice =
  | { kind: "attempt"; idempotencyKey: string; outcome: AttemptOutcome; noticeId: string }
  | { kind: "refund"; idempotencyKey: string; outcome: RefundOutcome; noticeId: string }
  | { kind: "ignored"; reason: string };  // a type we do not use: answered 200, nothing changes

/**
 * PaymentProcessor moves the money. The test-mode processor is the only one
 * so far; a real one plugs in here without the lifecycle changing.
 */
export interface PaymentProcessor {
  /** Shown on the page ("test mode"), and in logs. */
  readonly name: string;
  readonly testMode: boolean;
  instructions(paymentIntentId: string, method: string): PaymentInstructions;
  charge(request: ChargeRequest): Promise<ChargeResult>;
  refund(request: RefundRequest, signal: AbortSignal): Promise<RefundOutcome>;
  refundStatus(ref: RefundRef, signal: AbortSignal): Promise<RefundOutcome>;
}
