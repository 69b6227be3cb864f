import type { ProcessorNotice } from "../payment-processor.js";
import { ProcessorWebhookRejected } from "../processor-webhook-rejected.js";
import { isRefundData, isTransactionData, refundOutcome } from "./paystack-outcomes.js";
import { refundIdFromNote } from "./paystack-refund-note.js";
import { verifyPaystackSignature } from "./paystack-signature.js";

const refundEvents = new Set(["refund.processed", "refund.failed", "refund.pending"]);

/**
 * parsePaystackWebhook verifies a Paystack webhook (x-paystack-signature:
 * the hex HMAC-SHA512 of the raw body with the secret key, compared in
 * constant time) before reading a byte of it, then names what it is about:
 * - charge.success: the attempt whose id is the transaction's reference,
 *   succeeded with Paystack's amount and currency (the settlement compares
 *   them with the intent's; a difference is never paid);
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
    return {
      kind: "attempt",
      idempotencyKey: data.reference,
      outcome: { kind: "succeeded", reference: data.reference, amount: BigInt(data.amount), currency: data.currency },
      noticeId: `${name}:${id}`,
    };
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
