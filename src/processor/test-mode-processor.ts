import { createHash, randomBytes } from "node:crypto";
import type { PaymentAttemptOutcome } from "../domain/payment-attempt.js";
import type { CardDetails, PaymentInstructions, PaymentProcessor, RefundOutcome } from "./payment-processor.js";

/** Interim: the synchronous charge the checkout still calls while the asynchronous port is built. */
export interface ChargeRequest {
  paymentIntentId: string;
  amount: bigint;
  method: string;
  card?: CardDetails;
}

/** Interim: what a synchronous charge answered. */
export interface ChargeResult {
  outcome: PaymentAttemptOutcome;
  reference: string;
  declineReason?: string;
}

/** Interim: the processor shape the checkout calls until it moves to the asynchronous port. */
export interface ChargingProcessor {
  readonly name: string;
  readonly testMode: boolean;
  instructions(paymentIntentId: string, method: string): PaymentInstructions;
  charge(request: ChargeRequest): Promise<ChargeResult>;
}

/** The test cards, as documented in the README. */
export const testCards = {
  succeeds: "4084084084084081",
  declined: "4000000000000002",
  /** The payment succeeds; every refund of it fails. */
  refundsFail: "4000000000005126",
} as const;

/** Marks the reference of a payment whose refunds fail, so any instance refunding it knows. */
const refundsFailPrefix = "txn_test_rf_";

/** TestModeProcessor is the test-mode processor: it charges, refunds, and tells a test or drill what it refunded. */
export interface TestModeProcessor extends ChargingProcessor, Pick<PaymentProcessor, "refund" | "refundStatus"> {
  /** How many refund calls each refund idempotency key made (a retry counts, a second refund never happens). */
  refundCalls(): ReadonlyMap<string, number>;
  /** Kobo refunded per payment reference: never more than was charged. */
  refundedByPayment(): ReadonlyMap<string, bigint>;
}

/**
 * createTestModeProcessor simulates a processor without moving money:
 * card 4084 0840 8408 4081 succeeds, 4000 0000 0000 0002 is declined, any
 * other (valid) number is declined with a hint to use a test card; a bank
 * transfer, a USSD payment and a third-party processor always succeed once the
 * customer confirms. Instructions derive from the intent id, so a reload shows
 * the same virtual account and USSD code.
 *
 * Refunds succeed at once, except those of a payment made with 4000 0000
 * 0000 5126, which fail. Like a real processor it refunds each idempotency
 * key once (a repeat answers the first outcome) and never refunds a payment
 * beyond its amount; its state is this process's memory.
 */
export function createTestModeProcessor(): TestModeProcessor {
  const digitsOf = (id: string, salt: string, count: number) => {
    const hash = createHash("sha256").update(`${salt}:${id}`).digest();
    let digits = "";
    for (let i = 0; digits.length < count; i++) digits += String(hash[i % hash.length]! % 10);
    return digits;
  };

  const refunds = new Map<string, { outcome: RefundOutcome; calls: number }>();
  const refunded = new Map<string, bigint>();

  return {
    name: "test mode",
    testMode: true,

    instructions(paymentIntentId, method): PaymentInstructions {
      switch (method) {
        case "card":
          return { kind: "card" };
        case "bank_transfer":
          return {
            kind: "bank_transfer",
            accountNumber: `99${digitsOf(paymentIntentId, "nuban", 8)}`,
            bankName: "Test Bank (test mode)",
            accountName: "Payment Intents Test Collections",
          };
        case "ussd":
          return { kind: "ussd", code: `*000*${digitsOf(paymentIntentId, "ussd", 6)}#` };
        default:
          return { kind: "processor", processorName: method };
      }
    },

    async charge(request: ChargeRequest): Promise<ChargeResult> {
      const reference = `txn_test_${randomBytes(12).toString("hex")}`;
      if (request.method !== "card") return { outcome: "succeeded", reference };
      const number = request.card?.number ?? "";
      if (number === testCards.succeeds) return { outcome: "succeeded", reference };
      if (number === testCards.refundsFail) return { outcome: "succeeded", reference: reference.replace("txn_test_", refundsFailPrefix) };
      if (number === testCards.declined) {
        return { outcome: "declined", reference, declineReason: "The card was declined by its issuer." };
      }
      return {
        outcome: "declined",
        reference,
        declineReason: "This is test mode: use a test card, such as 4084 0840 8408 4081.",
      };
    },

    async refund(request) {
      const seen = refunds.get(request.idempotencyKey);
      if (seen) {
        seen.calls += 1;
        return seen.outcome;
      }
      const payment = request.attempt.reference ?? "";
      const before = refunded.get(payment) ?? 0n;
      let outcome: RefundOutcome;
      if (payment.startsWith(refundsFailPrefix)) {
        outcome = { kind: "failed", reference: null, reason: "The test card's issuer refused the refund." };
      } else if (before + request.amount > request.attempt.amount) {
        outcome = { kind: "failed", reference: null, reason: "The refund is more than what is left of the payment." };
      } else {
        refunded.set(payment, before + request.amount);
        outcome = { kind: "succeeded", reference: `rfn_test_${randomBytes(12).toString("hex")}` };
      }
      refunds.set(request.idempotencyKey, { outcome, calls: 1 });
      return outcome;
    },

    async refundStatus(ref) {
      return refunds.get(ref.idempotencyKey)?.outcome ?? { kind: "unknown", reason: "the test processor has no such refund" };
    },

    refundCalls: () => new Map([...refunds].map(([key, { calls }]) => [key, calls])),
    refundedByPayment: () => new Map(refunded),
  };
}
