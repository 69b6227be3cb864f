import type { AttemptOutcome, RefundOutcome } from "../payment-processor.js";
import type { RefundData, TransactionData } from "./paystack-wire.js";

/** The transaction statuses that will not change into a payment. */
const declinedStatuses = new Set(["failed", "abandoned", "reversed"]);

/**
 * transactionOutcome reads a verified transaction (GET
 * /transaction/verify/{reference}) against what we asked for. A success
 * counts only when Paystack's amount and currency are ours: anything else is
 * declined with reason "amount_mismatch" and the mismatch, never paid.
 * failed, abandoned (the customer left Paystack's page) and reversed are
 * declined; anything else (ongoing, pending, processing, queued, …) pending.
 */
export function transactionOutcome(data: TransactionData, expected: { amount: bigint; currency: string }): AttemptOutcome {
  if (data.status === "success") {
    const amount = BigInt(data.amount);
    if (amount !== expected.amount || data.currency !== expected.currency) {
      return { kind: "declined", reference: data.reference, reason: "amount_mismatch", mismatch: { amount, currency: data.currency } };
    }
    return { kind: "succeeded", reference: data.reference, amount, currency: data.currency };
  }
  if (declinedStatuses.has(data.status)) {
    return { kind: "declined", reference: data.reference, reason: declineReason(data) };
  }
  return { kind: "pending", reference: data.reference };
}

function declineReason(data: TransactionData): string {
  if (data.status === "abandoned") return "The payment was not completed on Paystack's page.";
  const said = data.gateway_response?.trim();
  return said ? `Paystack: ${said.slice(0, 200)}` : `Paystack reports the payment ${data.status}.`;
}

/**
 * refundOutcome reads a Paystack refund: processed is done, failed is
 * refused; pending, processing and needs-attention (Paystack needs the
 * customer's account details) are still open.
 */
export function refundOutcome(data: RefundData): RefundOutcome {
  const reference = String(data.id);
  if (data.status === "processed") return { kind: "succeeded", reference };
  if (data.status === "failed") return { kind: "failed", reference, reason: "Paystack could not refund the payment." };
  return { kind: "pending", reference };
}

/** isTransactionData checks the few fields the adapter reads before it trusts them. */
export function isTransactionData(data: unknown): data is TransactionData {
  const d = data as Partial<TransactionData> | null;
  return (
    typeof d === "object" &&
    d !== null &&
    typeof d.status === "string" &&
    typeof d.reference === "string" &&
    Number.isSafeInteger(d.amount) &&
    typeof d.currency === "string"
  );
}

/** isRefundData checks the few fields the adapter reads before it trusts them. */
export function isRefundData(data: unknown): data is RefundData {
  const d = data as Partial<RefundData> | null;
  return typeof d === "object" && d !== null && Number.isSafeInteger(d.id) && typeof d.status === "string";
}
