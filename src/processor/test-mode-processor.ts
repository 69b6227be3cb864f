import { createHash, randomBytes } from "node:crypto";
import type { ChargeRequest, ChargeResult, PaymentInstructions, PaymentProcessor } from "./payment-processor.js";

/** The test cards, as documented in the README. */
export const testCards = {
  succeeds: "4084084084084081",
  declined: "4000000000000002",
} as const;

/**
 * createTestModeProcessor simulates a processor without moving money:
 * card 4084 0840 8408 4081 succeeds, 4000 0000 0000 0002 is declined, any
 * other (valid) number is declined with a hint to use a test card; a bank
 * transfer, a USSD payment and a third-party processor always succeed once the
 * customer confirms. Instructions derive from the intent id, so a reload shows
 * the same virtual account and USSD code.
 */
export function createTestModeProcessor(): PaymentProcessor {
  const digitsOf = (id: string, salt: string, count: number) => {
    const hash = createHash("sha256").update(`${salt}:${id}`).digest();
    let digits = "";
    for (let i = 0; digits.length < count; i++) digits += String(hash[i % hash.length]! % 10);
    return digits;
  };

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
      if (number === testCards.declined) {
        return { outcome: "declined", reference, declineReason: "The card was declined by its issuer." };
      }
      return {
        outcome: "declined",
        reference,
        declineReason: "This is test mode: use a test card, such as 4084 0840 8408 4081.",
      };
    },
  };
}
