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
}
