import { Code, ConnectError } from "@connectrpc/connect";
import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { RefundRecord } from "../domain/refund.js";

/** What a write is told when a text value cannot be stored. Fixed: the value itself is never echoed. */
export const unstorableTextMessage = "the request contains text that cannot be stored (a NUL character or invalid Unicode)";

// NUL, or a UTF-16 surrogate without its partner.
const unstorable = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * isStorableText tells whether PostgreSQL can store a string exactly as given.
 * A text value cannot hold NUL (the server refuses it as an invalid byte
 * sequence), and a lone surrogate has no UTF-8 form: encoding would silently
 * turn it into U+FFFD, so what was stored would not be what was sent. Every
 * store applies the same rule, so the in-memory store refuses what
 * PostgreSQL would.
 */
export function isStorableText(value: string): boolean {
  return !unstorable.test(value);
}

/**
 * checkStorableText fails a write with InvalidArgument when any value cannot
 * be stored, before anything is sent or changed.
 */
export function checkStorableText(values: Iterable<string | null | undefined>): void {
  for (const value of values) {
    if (typeof value === "string" && !isStorableText(value)) {
      throw new ConnectError(unstorableTextMessage, Code.InvalidArgument);
    }
  }
}

/** intentTexts is every text an intent's insert stores: what both stores check before writing one. */
export function intentTexts(record: PaymentIntentRecord): (string | null)[] {
  return [
    record.id,
    record.merchantId,
    record.customerEmail,
    record.receiptEmail,
    record.clientReference,
    record.callbackUrl,
    record.transaction,
    record.nextActionUrl,
    record.checkoutToken,
    record.requestFingerprint,
    ...record.paymentMethods,
    ...record.splits.map((s) => s.settlementAccountId),
    ...record.meta.flatMap((e) => [e.name, e.value]),
  ];
}

/** refundTexts is every text a refund's insert stores: what both refund stores check before writing one. */
export function refundTexts(record: RefundRecord): (string | null)[] {
  return [
    record.id,
    record.merchantId,
    record.paymentIntentId,
    record.attemptId,
    record.clientReference,
    record.requestFingerprint,
    record.failureReason,
    record.processor,
    record.processorReference,
    ...record.meta.flatMap((e) => [e.name, e.value]),
  ];
}

/** attemptTexts is every text an attempt's insert stores. */
export function attemptTexts(attempt: PaymentAttemptRecord): (string | null)[] {
  return [
    attempt.id,
    attempt.paymentIntentId,
    attempt.merchantId,
    attempt.method,
    attempt.processor,
    attempt.idempotencyKey,
    attempt.processorReference,
    attempt.nextActionUrl,
    attempt.declineReason,
  ];
}
