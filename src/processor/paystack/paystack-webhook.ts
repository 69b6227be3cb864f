import type { AttemptOutcome, ProcessorNotice } from "../payment-processor.js";
import { ProcessorWebhookRejected } from "../processor-webhook-rejected.js";
import { isRefundData, isTransactionData, refundOutcome, transactionOutcome } from "./paystack-outcomes.js";
import { refundIdFromNote } from "./paystack-refund-note.js";
import { verifyPaystackSignature } from "./paystack-signature.js";

const refundEvents = new Set(["refund.processed", "refund.failed", "refund.pending"]);

/**
 * parsePaystackWebhook verifies a Paystack webhook (x-paystack-signature:
 * the hex HMAC-SHA512 of the raw body with the secret key, compared in
 * constant time) before reading a byte of it, then names what it is about:
 * - charge.success: the attempt whose id is the transaction's reference,
 *   succeeded with Paystack's amount and currency, or declined
 *   "amount_mismatch" when they differ from the amount_kobo our initialize
 *   put in its metadata (signed with the rest, so it is ours);
 * - refund.processed, refund.failed, refund.pending: the refund whose id our
 *   merchant_note carries; a refund without one (made on the dashboard) is
 *   ignored;
 * - anything else: ignored (answered 200, nothing changes).
 * The notice id is the event and Paystack's id, so a replay is recognised.
 */
export function parsePaystackWebhook(
  secretKey: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: Buffer,
  onMismatch: (attempt: string, expected: bigint, outcome: AttemptOutcome) => void = () => {},
): ProcessorNotice {
  const signature = headers["x-paystack-signature"];
  if (typeof signature !== "string" || signature === "") throw new ProcessorWebhookRejected("no x-paystack-signature header");
  if (!verifyPaystackSignature(secretKey, rawBody, signature)) {
    throw new ProcessorWebhookRejected("x-paystack-signature does not verify");
  }
  let event: { event?: unknown; data?: unknown };
  try {
    event = JSON.parse(rawBody.toString("utf8"));
  } catch {
    throw new ProcessorWebhookRejected("the body is not JSON");
  }
  if (typeof event !== "object" || event === null || typeof event.event !== "string" || typeof event.data !== "object" || event.data === null) {
    throw new ProcessorWebhookRejected("the body is not a Paystack event");
  }
  const name = event.event;
  const data = event.data;

  if (name === "charge.success") {
    if (!isTransactionData(data)) throw new ProcessorWebhookRejected("a charge.success event without its transaction");
    const id = Number.isSafeInteger(data.id) ? String(data.id) : data.reference;
    const expected = expectedAmount(data.metadata);
    let outcome: AttemptOutcome = { kind: "succeeded", reference: data.reference, amount: BigInt(data.amount), currency: data.currency };
    if (expected !== undefined) {
      outcome = transactionOutcome({ ...data, status: "success" }, { amount: expected, currency: "NGN" });
      onMismatch(data.reference, expected, outcome);
    }
    return { kind: "attempt", idempotencyKey: data.reference, outcome, noticeId: `${name}:${id}` };
  }
  if (refundEvents.has(name)) {
    if (!isRefundData(data)) throw new ProcessorWebhookRejected(`a ${name} event without its refund`);
    const refundId = refundIdFromNote(data.merchant_note);
    if (refundId === undefined) return { kind: "ignored", reason: `${name} of a refund not made by this service` };
    const status = name === "refund.processed" ? "processed" : name === "refund.failed" ? "failed" : "pending";
    return { kind: "refund", idempotencyKey: refundId, outcome: refundOutcome({ ...data, status }), noticeId: `${name}:${data.id}` };
  }
  return { kind: "ignored", reason: `Paystack event ${name} is not used` };
}

/** expectedAmount reads the amount_kobo begin put in the transaction's metadata (an object, or its JSON text). */
function expectedAmount(metadata: unknown): bigint | undefined {
  let value = metadata;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  const kobo = (value as { amount_kobo?: unknown } | null)?.amount_kobo;
  return typeof kobo === "string" && /^\d{1,18}$/.test(kobo) ? BigInt(kobo) : undefined;
}
