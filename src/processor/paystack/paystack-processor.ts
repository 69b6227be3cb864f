import type { Clock } from "../../lib/clock.js";
import { createSystemClock } from "../../lib/clock.js";
import type { Logger } from "../../lib/logger.js";
import { silentLogger } from "../../lib/logger.js";
import type { AttemptOutcome, PaymentProcessor, RefundOutcome } from "../payment-processor.js";
import { createPaystackHttp, type PaystackReply } from "./paystack-http.js";
import { isRefundData, isTransactionData, refundOutcome, transactionOutcome } from "./paystack-outcomes.js";
import { refundNote } from "./paystack-refund-note.js";
import { paystackName } from "./paystack-name.js";
import { isPaystackTestKey } from "./paystack-secret-key.js";
import { parsePaystackWebhook } from "./paystack-webhook.js";
import type { InitializeBody, InitializeData, PageMeta, RefundBody, RefundData } from "./paystack-wire.js";


/** How far back a refund retry looks for a refund an earlier call made (see findRefund). */
const refundLookbackMs = 48 * 3600_000;
const refundPageSize = 100;
const refundPagesAtMost = 10;

/**
 * Paystack reports a transaction whose customer has not paid yet as
 * "abandoned", also while the customer is still on its page (reading, typing
 * an OTP, making a transfer). A status check takes it as final only once the
 * customer is back with us (the return URL) or the attempt has been open this
 * long: 30 minutes, time for an OTP, a bank's app or a transfer on its page,
 * and within PROCESSING_ALARM_AFTER's default hour (docs/payments.md).
 */
export const abandonedFinalAfterMs = 30 * 60_000;

/** What the customer reads when Paystack cannot start their payment. */
export const unreachableReason = "Paystack could not be reached, so nothing was charged. Please try again in a moment, or choose another way to pay.";

/** The origin of Paystack's hosted page; a stand-in at another PAYSTACK_BASE_URL serves its page itself. */
function hostedPageOrigin(baseUrl: string): string {
  const url = new URL(baseUrl);
  return url.hostname === "api.paystack.co" ? "https://checkout.paystack.com" : url.origin;
}

/** PaystackProcessorOptions: the secret key (PAYSTACK_SECRET_KEY) and where Paystack is (PAYSTACK_BASE_URL). */
export interface PaystackProcessorOptions {
  secretKey: string;
  baseUrl: string;
  /** PROCESSOR_TIMEOUT_MS: the longest one call to Paystack may take. */
  timeoutMs: number;
  fetch?: typeof globalThis.fetch;
  clock?: Clock;
  /** Where an amount mismatch and a refused key are reported, at error. */
  logger?: Logger;
}

/**
 * createPaystackProcessor collects through Paystack's hosted page
 * (docs/payments.md, "Collecting with Paystack"): begin initializes a
 * transaction whose reference is our attempt id, so Paystack itself refuses
 * a second one for the same attempt, and sends the customer to its
 * authorization_url; status verifies it; refunds go through POST /refund.
 * Paystack's own failures are `unknown` (the port's rule); a refused
 * request is declined or failed, since Paystack did nothing.
 */
export function createPaystackProcessor(options: PaystackProcessorOptions): PaymentProcessor {
  const http = createPaystackHttp(options);
  const clock = options.clock ?? createSystemClock();
  const logger = options.logger ?? silentLogger;

  const unknown = (reply: Extract<PaystackReply, { kind: "unavailable" }>) =>
    ({ kind: "unknown", reason: reply.reason, ...(reply.retryAfterMs === undefined ? {} : { retryAfterMs: reply.retryAfterMs }) }) as const;

  /** A 401 or 403 is our configuration, not the payment: stays unknown (the processing alarm fires) and says so at error. */
  const keyRefused = (status: number): { kind: "unknown"; reason: string } => {
    logger.error({ processor: paystackName, status }, "Paystack refused the secret key: check PAYSTACK_SECRET_KEY");
    return { kind: "unknown", reason: `Paystack refused the secret key (${status})` };
  };

  /** An initialize that got no answer: declined, with what the customer should do. */
  const notReached = (why: string): AttemptOutcome => {
    logger.warn({ processor: paystackName, reason: why }, "Paystack did not take a payment attempt: declined, nothing charged");
    return { kind: "declined", reference: null, reason: unreachableReason };
  };

  /** An amount mismatch is never paid, and someone must look: the log line at error says what to do. */
  function reportMismatch(attempt: string, expected: bigint, outcome: AttemptOutcome) {
    if (outcome.kind !== "declined" || !outcome.mismatch) return;
    logger.error(
      { processor: paystackName, attempt, expected: String(expected), paid: String(outcome.mismatch.amount), currency: outcome.mismatch.currency },
      "Paystack took a different amount or currency than the attempt's: not marked paid; refund it on Paystack's dashboard",
    );
  }

  /**
   * findRefund looks for a refund an earlier call made for this idempotency
   * key (POST /refund has none of its own): Paystack's refunds of the last 48
   * hours, by our note. Without a complete look it answers unknown, because
   * only a complete look proves that posting again cannot refund twice.
   */
  async function findRefund(
    key: string,
    signal: AbortSignal,
  ): Promise<{ kind: "found"; data: RefundData } | { kind: "absent" } | RefundOutcome> {
    const note = refundNote(key);
    const from = new Date(clock.now().getTime() - refundLookbackMs).toISOString();
    for (let page = 1; page <= refundPagesAtMost; page++) {
      const reply = await http.call("GET", "/refund", { query: { perPage: String(refundPageSize), page: String(page), from } }, signal);
      if (reply.kind === "unavailable") return unknown(reply);
      if (reply.kind === "refused") {
        if (reply.status === 401 || reply.status === 403) return keyRefused(reply.status);
        return { kind: "unknown", reason: `Paystack refused to list refunds: ${reply.message}` };
      }
      const list = Array.isArray(reply.body.data) ? reply.body.data : [];
      const found = list.find((item) => isRefundData(item) && item.merchant_note === note);
      if (found) return { kind: "found", data: found as RefundData };
      const meta = reply.body.meta as Partial<PageMeta> | undefined;
      if (list.length < refundPageSize || (typeof meta?.pageCount === "number" && page >= meta.pageCount)) return { kind: "absent" };
    }
    return { kind: "unknown", reason: `more than ${refundPagesAtMost * refundPageSize} Paystack refunds in 48 hours: cannot rule out an earlier one` };
  }

  return {
    name: paystackName,
    testMode: isPaystackTestKey(options.secretKey),

    handles: (method) => method === paystackName,

    instructions: () => ({ kind: "processor", processorName: "Paystack", redirectsTo: hostedPageOrigin(options.baseUrl) }),

    async begin(request, signal) {
      if (request.amount > BigInt(Number.MAX_SAFE_INTEGER)) {
        return { kind: "declined", reference: null, reason: "The amount is more than Paystack accepts." };
      }
      const body: InitializeBody = {
        email: request.customerEmail,
        amount: Number(request.amount),
        currency: request.currency,
        reference: request.idempotencyKey,
        callback_url: request.returnUrl,
        metadata: { payment_intent_id: request.paymentIntentId, amount_kobo: String(request.amount) },
      };
      const reply = await http.call("POST", "/transaction/initialize", { body }, signal);
      // Only the customer, on the authorization_url this answer carries, can pay a
      // transaction: without the answer nothing can be charged, so the attempt
      // ends at once and the customer may try again (not left processing).
      if (reply.kind === "unavailable") return notReached(reply.reason);
      if (reply.kind === "refused") {
        if (reply.status === 401 || reply.status === 403) return notReached(keyRefused(reply.status).reason);
        // The same reference twice: an earlier call got through; verify says how it went.
        if (/duplicate/i.test(reply.message)) return { kind: "unknown", reason: "Paystack already has this attempt" };
        return { kind: "declined", reference: null, reason: `Paystack refused the payment: ${reply.message}` };
      }
      const data = reply.body.data as Partial<InitializeData> | undefined;
      if (typeof data?.authorization_url !== "string" || !/^https?:\/\//.test(data.authorization_url)) {
        return { kind: "unknown", reason: "Paystack's answer to initialize has no authorization_url" };
      }
      return { kind: "redirect", reference: request.idempotencyKey, url: data.authorization_url };
    },

    async status(ref, signal) {
      const reference = ref.reference ?? ref.idempotencyKey;
      const reply = await http.call("GET", `/transaction/verify/${encodeURIComponent(reference)}`, {}, signal);
      if (reply.kind === "unavailable") return unknown(reply);
      if (reply.kind === "refused") {
        if (reply.status === 401 || reply.status === 403) return keyRefused(reply.status);
        // Paystack has no such transaction: initialize never reached it, so nothing can be charged.
        if (reply.status === 404) return { kind: "declined", reference: null, reason: "Paystack has no such payment." };
        return { kind: "unknown", reason: `Paystack refused to verify: ${reply.message}` };
      }
      if (!isTransactionData(reply.body.data)) return { kind: "unknown", reason: "Paystack's answer to verify has no transaction" };
      const { status, reference: paystackReference } = reply.body.data;
      const customerMayBeOnPage = !ref.customerReturned && ref.openForMs !== undefined && ref.openForMs < abandonedFinalAfterMs;
      if (status === "abandoned" && customerMayBeOnPage) return { kind: "pending", reference: paystackReference };
      const outcome = transactionOutcome(reply.body.data, { amount: ref.amount, currency: "NGN" });
      reportMismatch(ref.idempotencyKey, ref.amount, outcome);
      return outcome;
    },

    parseWebhook: (headers, rawBody) => parsePaystackWebhook(options.secretKey, headers, rawBody, reportMismatch),

    async refund(request, signal) {
      const earlier = await findRefund(request.idempotencyKey, signal);
      if (earlier.kind === "found") return refundOutcome(earlier.data);
      if (earlier.kind !== "absent") return earlier;
      const body: RefundBody = {
        transaction: request.attempt.reference ?? request.attempt.idempotencyKey,
        amount: Number(request.amount),
        currency: "NGN",
        merchant_note: refundNote(request.idempotencyKey),
      };
      const reply = await http.call("POST", "/refund", { body }, signal);
      if (reply.kind === "unavailable") return unknown(reply);
      if (reply.kind === "refused") {
        if (reply.status === 401 || reply.status === 403) return keyRefused(reply.status);
        return { kind: "failed", reference: null, reason: `Paystack refused the refund: ${reply.message}` };
      }
      if (!isRefundData(reply.body.data)) return { kind: "unknown", reason: "Paystack's answer to refund has no refund" };
      return refundOutcome(reply.body.data);
    },

    async refundStatus(ref, signal) {
      if (ref.reference === null) {
        const earlier = await findRefund(ref.idempotencyKey, signal);
        if (earlier.kind === "found") return refundOutcome(earlier.data);
        return earlier.kind === "absent" ? { kind: "unknown", reason: "Paystack has no refund for this key yet" } : earlier;
      }
      const reply = await http.call("GET", `/refund/${encodeURIComponent(ref.reference)}`, {}, signal);
      if (reply.kind === "unavailable") return unknown(reply);
      if (reply.kind === "refused") {
        if (reply.status === 401 || reply.status === 403) return keyRefused(reply.status);
        return { kind: "unknown", reason: `Paystack refused to fetch the refund: ${reply.message}` };
      }
      if (!isRefundData(reply.body.data)) return { kind: "unknown", reason: "Paystack's answer to fetch a refund has no refund" };
      return refundOutcome(reply.body.data);
    },
  };
}
