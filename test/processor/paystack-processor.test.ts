import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import type { Logger } from "../../src/lib/logger.js";
import type { BeginAttempt, PaymentProcessor } from "../../src/processor/payment-processor.js";
import { abandonedFinalAfterMs, createPaystackProcessor, unreachableReason } from "../../src/processor/paystack/paystack-processor.js";
import { signPaystackBody } from "../../src/processor/paystack/paystack-signature.js";
import { ProcessorWebhookRejected } from "../../src/processor/processor-webhook-rejected.js";
import { paystackRoutes, startPaystackStandIn, type PaystackStandIn } from "../support/paystack-stand-in.js";
import { freePort } from "../support/ports.js";
import { waitFor } from "../support/redis.js";

const secretKey = "sk_test_4d1f0c2b9e8a7d6c5b4a39281706f5e4d3c2b1a0";
const signal = () => new AbortController().signal;

/** A logger that keeps what it was given, to assert on errors and on the key never appearing. */
function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const logger: Logger = {
    info: (fields, message) => void lines.push({ level: "info", fields, message }),
    warn: (fields, message) => void lines.push({ level: "warn", fields, message }),
    error: (fields, message) => void lines.push({ level: "error", fields, message }),
  };
  return { logger, lines };
}

let attemptCounter = 0;
function attempt(amount = 250_000n): BeginAttempt {
  attemptCounter += 1;
  return {
    idempotencyKey: `att_${process.pid}_${attemptCounter}`,
    paymentIntentId: `pi_${attemptCounter}`,
    merchantId: "merchantA",
    amount,
    currency: "NGN",
    method: "paystack",
    customerEmail: "ada@example.com",
    returnUrl: `http://127.0.0.1:9/checkout/tok/return?attempt=att_${attemptCounter}`,
  };
}

describe("createPaystackProcessor", () => {
  let standIn: PaystackStandIn;
  let processor: PaymentProcessor;
  let log: ReturnType<typeof recordingLogger>;

  before(async () => {
    standIn = await startPaystackStandIn({ secretKey });
  });
  after(() => standIn.close());
  beforeEach(() => {
    Object.assign(standIn.knobs, { down: [], slowMs: 0, tooManyRetryAfter: null, mismatchKobo: 0, refundsBecome: "processed", webhookUrl: null });
    log = recordingLogger();
    processor = createPaystackProcessor({ secretKey, baseUrl: standIn.url, timeoutMs: 10_000, logger: log.logger });
  });

  /** Begins an attempt, pays it as the customer would, and returns it. */
  async function paidAttempt(amount = 250_000n) {
    const request = attempt(amount);
    const begun = await processor.begin(request, signal());
    assert.equal(begun.kind, "redirect");
    await standIn.pay(request.idempotencyKey);
    return { request, ref: { idempotencyKey: request.idempotencyKey, reference: request.idempotencyKey, amount } };
  }

  it("is the paystack processor, in test mode with a sk_test_ key, and collects only its own method", () => {
    assert.equal(processor.name, "paystack");
    assert.equal(processor.testMode, true);
    assert.equal(processor.handles("paystack"), true);
    assert.equal(processor.handles("card"), false);
    const live = createPaystackProcessor({ secretKey: "sk_live_" + "a".repeat(40), baseUrl: standIn.url, timeoutMs: 10_000 });
    assert.equal(live.testMode, false);
  });

  it("begin initializes a transaction whose reference is the attempt id and redirects to its authorization_url", async () => {
    const request = attempt();
    const outcome = await processor.begin(request, signal());
    assert.equal(outcome.kind, "redirect");
    const t = standIn.transaction(request.idempotencyKey)!;
    assert.deepEqual(outcome, { kind: "redirect", reference: request.idempotencyKey, url: `${standIn.url}/checkout/${t.accessCode}` });
    const sent = standIn.exchanges.at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${secretKey}`);
    assert.deepEqual(sent.body, {
      email: "ada@example.com",
      amount: 250000,
      currency: "NGN",
      reference: request.idempotencyKey,
      callback_url: request.returnUrl,
      metadata: { payment_intent_id: request.paymentIntentId, amount_kobo: "250000" },
    });
  });

  it("begin again for the same attempt is unknown (Paystack refuses the duplicate reference), never a second transaction", async () => {
    const request = attempt();
    await processor.begin(request, signal());
    assert.deepEqual(await processor.begin(request, signal()), { kind: "unknown", reason: "Paystack already has this attempt" });
  });

  it("status: abandoned is declined, paid is succeeded with Paystack's amount, an unknown reference is declined", async () => {
    const request = attempt(120_000n);
    await processor.begin(request, signal());
    const ref = { idempotencyKey: request.idempotencyKey, reference: request.idempotencyKey, amount: 120_000n };
    assert.deepEqual(await processor.status(ref, signal()), {
      kind: "declined",
      reference: request.idempotencyKey,
      reason: "The payment was not completed on Paystack's page.",
    });
    await standIn.pay(request.idempotencyKey);
    assert.deepEqual(await processor.status(ref, signal()), { kind: "succeeded", reference: request.idempotencyKey, amount: 120_000n, currency: "NGN" });
    assert.deepEqual(await processor.status({ idempotencyKey: "att_never", reference: null, amount: 1n }, signal()), {
      kind: "declined",
      reference: null,
      reason: "Paystack has no such payment.",
    });
  });

  it("status: abandoned stays pending while the customer may still be on Paystack's page, and is declined once back or after 30 minutes", async () => {
    const request = attempt(120_000n);
    await processor.begin(request, signal());
    const ref = { idempotencyKey: request.idempotencyKey, reference: request.idempotencyKey, amount: 120_000n };
    const declined = { kind: "declined", reference: request.idempotencyKey, reason: "The payment was not completed on Paystack's page." };
    assert.equal(abandonedFinalAfterMs, 30 * 60_000);
    assert.deepEqual(await processor.status({ ...ref, openForMs: 40_000 }, signal()), { kind: "pending", reference: request.idempotencyKey });
    assert.deepEqual(await processor.status({ ...ref, openForMs: abandonedFinalAfterMs - 1 }, signal()), { kind: "pending", reference: request.idempotencyKey });
    assert.deepEqual(await processor.status({ ...ref, openForMs: abandonedFinalAfterMs }, signal()), declined);
    assert.deepEqual(await processor.status({ ...ref, openForMs: 40_000, customerReturned: true }, signal()), declined);
  });

  it("offers Paystack's hosted page: checkout.paystack.com for Paystack's API, the stand-in's own origin for a stand-in", () => {
    const intent = {} as Parameters<PaymentProcessor["instructions"]>[0];
    assert.deepEqual(processor.instructions(intent, "paystack"), { kind: "processor", processorName: "Paystack", redirectsTo: standIn.url });
    const real = createPaystackProcessor({ secretKey, baseUrl: "https://api.paystack.co", timeoutMs: 10_000 });
    assert.deepEqual(real.instructions(intent, "paystack"), { kind: "processor", processorName: "Paystack", redirectsTo: "https://checkout.paystack.com" });
  });

  it("status: a verified amount other than the attempt's is declined amount_mismatch, logged at error, never succeeded", async () => {
    standIn.knobs.mismatchKobo = -100_000;
    const { ref } = await paidAttempt(250_000n);
    assert.deepEqual(await processor.status(ref, signal()), {
      kind: "declined",
      reference: ref.reference,
      reason: "amount_mismatch",
      mismatch: { amount: 150_000n, currency: "NGN" },
    });
    const errors = log.lines.filter((line) => line.level === "error");
    assert.equal(errors.length, 1);
    assert.deepEqual(errors[0]!.fields, { processor: "paystack", attempt: ref.idempotencyKey, expected: "250000", paid: "150000", currency: "NGN" });
  });

  it("a 5xx, a timeout and a network error are unknown (at initialize: declined, nothing can be charged); a 429 is unknown with Retry-After's delay", async () => {
    const notReached = { kind: "declined", reference: null, reason: unreachableReason };
    standIn.knobs.down = [...paystackRoutes];
    assert.deepEqual(await processor.begin(attempt(), signal()), notReached);
    assert.equal(log.lines.at(-1)?.fields["reason"], "Paystack answered 503 to POST /transaction/initialize");
    const ref0 = { idempotencyKey: "att_y", reference: "att_y", amount: 1n };
    assert.deepEqual(await processor.status(ref0, signal()), { kind: "unknown", reason: "Paystack answered 503 to GET /transaction/verify/att_y" });
    standIn.knobs.down = [];

    standIn.knobs.slowMs = 4_000;
    const impatient = createPaystackProcessor({ secretKey, baseUrl: standIn.url, timeoutMs: 500 });
    assert.deepEqual(await impatient.begin(attempt(), signal()), notReached);
    // The stand-in would answer after 4 s: this reason comes only from the 500 ms timeout cutting the call.
    assert.deepEqual(await impatient.status(ref0, signal()), { kind: "unknown", reason: "Paystack did not answer within 500 ms" });
    standIn.knobs.slowMs = 0;

    standIn.knobs.tooManyRetryAfter = "7";
    const ref = { idempotencyKey: "att_x", reference: "att_x", amount: 1n };
    assert.deepEqual(await processor.status(ref, signal()), { kind: "unknown", reason: "Paystack answered 429 to GET /transaction/verify/att_x", retryAfterMs: 7_000 });
    standIn.knobs.tooManyRetryAfter = null;

    const closed = await freePort();
    const unreachable = createPaystackProcessor({ secretKey, baseUrl: `http://127.0.0.1:${closed}`, timeoutMs: 10_000 });
    assert.deepEqual(await unreachable.status(ref, signal()), { kind: "unknown", reason: "Paystack could not be reached (ECONNREFUSED)" });
  });

  it("a refused secret key is unknown (at initialize: declined) and logged at error, and nothing it says carries the key", async () => {
    const wrongKey = "sk_test_" + "f".repeat(40);
    const wrong = createPaystackProcessor({ secretKey: wrongKey, baseUrl: standIn.url, timeoutMs: 10_000, logger: log.logger });
    const outcome = await wrong.begin(attempt(), signal());
    assert.deepEqual(outcome, { kind: "declined", reference: null, reason: unreachableReason });
    const status = await wrong.status({ idempotencyKey: "att_z", reference: "att_z", amount: 1n }, signal());
    assert.deepEqual(status, { kind: "unknown", reason: "Paystack refused the secret key (401)" });
    assert.equal(log.lines.filter((line) => line.level === "error").length, 2);
    assert.ok(!JSON.stringify(status).includes(wrongKey));
    assert.ok(!JSON.stringify(log.lines).includes(wrongKey));
    assert.ok(!JSON.stringify(outcome).includes(wrongKey));
  });

  describe("parseWebhook", () => {
    it("charge.success names the attempt by its reference, with Paystack's amount; the same event again has the same notice id", async () => {
      const { request } = await paidAttempt(99_900n);
      const raw = Buffer.from(JSON.stringify(standIn.chargeSuccessEvent(request.idempotencyKey)));
      const headers = { "x-paystack-signature": signPaystackBody(secretKey, raw) };
      const first = processor.parseWebhook(headers, raw);
      const t = standIn.transaction(request.idempotencyKey)!;
      assert.deepEqual(first, {
        kind: "attempt",
        idempotencyKey: request.idempotencyKey,
        outcome: { kind: "succeeded", reference: request.idempotencyKey, amount: 99_900n, currency: "NGN" },
        noticeId: `charge.success:${t.id}`,
      });
      assert.deepEqual(processor.parseWebhook(headers, raw), first);
    });

    it("a charge.success for another amount than our initialize asked is declined amount_mismatch and logged at error", async () => {
      standIn.knobs.mismatchKobo = 5_000;
      const { request } = await paidAttempt(99_900n);
      const raw = Buffer.from(JSON.stringify(standIn.chargeSuccessEvent(request.idempotencyKey)));
      const notice = processor.parseWebhook({ "x-paystack-signature": signPaystackBody(secretKey, raw) }, raw);
      assert.deepEqual(notice, {
        kind: "attempt",
        idempotencyKey: request.idempotencyKey,
        outcome: { kind: "declined", reference: request.idempotencyKey, reason: "amount_mismatch", mismatch: { amount: 104_900n, currency: "NGN" } },
        noticeId: `charge.success:${standIn.transaction(request.idempotencyKey)!.id}`,
      });
      assert.deepEqual(
        log.lines.filter((line) => line.level === "error").map((line) => line.fields),
        [{ processor: "paystack", attempt: request.idempotencyKey, expected: "99900", paid: "104900", currency: "NGN" }],
      );
    });

    it("rejects a missing, malformed, repeated or wrong signature and a body changed after signing, never naming the key", async () => {
      const { request } = await paidAttempt();
      const raw = Buffer.from(JSON.stringify(standIn.chargeSuccessEvent(request.idempotencyKey)));
      const good = signPaystackBody(secretKey, raw);
      const cases: [string, Record<string, string | string[] | undefined>, Buffer][] = [
        ["missing", {}, raw],
        ["empty", { "x-paystack-signature": "" }, raw],
        ["not hex", { "x-paystack-signature": "z".repeat(128) }, raw],
        ["sent twice", { "x-paystack-signature": [good, good] }, raw],
        ["another key's", { "x-paystack-signature": signPaystackBody("sk_test_" + "0".repeat(40), raw) }, raw],
        ["a changed body", { "x-paystack-signature": good }, Buffer.from(raw.toString().replace('"success"', '"failed"'))],
        ["sha256", { "x-paystack-signature": good.slice(0, 64) }, raw],
      ];
      for (const [name, headers, body] of cases) {
        assert.throws(
          () => processor.parseWebhook(headers, body),
          (error: unknown) => error instanceof ProcessorWebhookRejected && !error.message.includes(secretKey),
          name,
        );
      }
    });

    it("ignores events it does not use and refunds not made by this service; a signed body that is no event is rejected", () => {
      const sign = (value: unknown) => {
        const raw = Buffer.from(typeof value === "string" ? value : JSON.stringify(value));
        return [{ "x-paystack-signature": signPaystackBody(secretKey, raw) }, raw] as const;
      };
      assert.deepEqual(processor.parseWebhook(...sign({ event: "transfer.success", data: { reference: "x" } })), {
        kind: "ignored",
        reason: "Paystack event transfer.success is not used",
      });
      assert.deepEqual(processor.parseWebhook(...sign({ event: "refund.processed", data: { id: 5, status: "processed", merchant_note: "goodwill" } })), {
        kind: "ignored",
        reason: "refund.processed of a refund not made by this service",
      });
      assert.throws(() => processor.parseWebhook(...sign("not json")), ProcessorWebhookRejected);
      assert.throws(() => processor.parseWebhook(...sign({ data: {} })), ProcessorWebhookRejected);
    });
  });

  describe("refunds", () => {
    it("a partial then a full refund: each pending with Paystack's id, then succeeded; more than is left is failed", async () => {
      const { ref } = await paidAttempt(250_000n);
      const partial = await processor.refund({ idempotencyKey: "rf_partial", attempt: ref, amount: 100_000n }, signal());
      const [first] = standIn.refundsOf(ref.idempotencyKey);
      assert.deepEqual(partial, { kind: "pending", reference: String(first!.id) });
      assert.deepEqual(standIn.exchanges.at(-1)!.body, { transaction: ref.reference, amount: 100000, currency: "NGN", merchant_note: "payment-intents refund rf_partial" });

      const rest = await processor.refund({ idempotencyKey: "rf_rest", attempt: ref, amount: 150_000n }, signal());
      assert.equal(rest.kind, "pending");
      const over = await processor.refund({ idempotencyKey: "rf_over", attempt: ref, amount: 1n }, signal());
      assert.deepEqual(over, { kind: "failed", reference: null, reason: "Paystack refused the refund: Refund amount cannot be more than the transaction's unrefunded amount" });

      await waitFor(() => standIn.refundsOf(ref.idempotencyKey).every((r) => r.status === "processed"), 5_000, "the refunds to be processed");
      assert.deepEqual(await processor.refundStatus({ idempotencyKey: "rf_partial", reference: String(first!.id) }, signal()), {
        kind: "succeeded",
        reference: String(first!.id),
      });
      assert.deepEqual(
        standIn.refundsOf(ref.idempotencyKey).map((r) => [r.amount, r.status]),
        [
          [100_000, "processed"],
          [150_000, "processed"],
        ],
      );
    });

    it("asking again with the same key finds the first refund, never makes a second", async () => {
      const { ref } = await paidAttempt(250_000n);
      standIn.knobs.refundsBecome = "pending";
      const first = await processor.refund({ idempotencyKey: "rf_twice", attempt: ref, amount: 50_000n }, signal());
      const again = await processor.refund({ idempotencyKey: "rf_twice", attempt: ref, amount: 50_000n }, signal());
      assert.deepEqual(again, first);
      assert.equal(standIn.refundsOf(ref.idempotencyKey).length, 1);
      // Without a reference (the first answer was lost), the status is found by the key too.
      assert.deepEqual(await processor.refundStatus({ idempotencyKey: "rf_twice", reference: null }, signal()), first);
    });

    it("a refund Paystack fails is failed; its webhook names our refund by the note", async () => {
      const { ref } = await paidAttempt(250_000n);
      standIn.knobs.refundsBecome = "failed";
      const created = await processor.refund({ idempotencyKey: "rf_fails", attempt: ref, amount: 250_000n }, signal());
      assert.equal(created.kind, "pending");
      await waitFor(() => standIn.refundsOf(ref.idempotencyKey)[0]?.status === "failed", 5_000, "the refund to fail");
      const status = await processor.refundStatus({ idempotencyKey: "rf_fails", reference: (created as { reference: string }).reference }, signal());
      assert.deepEqual(status, { kind: "failed", reference: (created as { reference: string }).reference, reason: "Paystack could not refund the payment." });

      const [r] = standIn.refundsOf(ref.idempotencyKey);
      const fetched = standIn.exchanges.at(-1)!.response as { data: unknown };
      const raw = Buffer.from(JSON.stringify({ event: "refund.failed", data: fetched.data }));
      assert.deepEqual(processor.parseWebhook({ "x-paystack-signature": signPaystackBody(secretKey, raw) }, raw), {
        kind: "refund",
        idempotencyKey: "rf_fails",
        outcome: { kind: "failed", reference: String(r!.id), reason: "Paystack could not refund the payment." },
        noticeId: `refund.failed:${r!.id}`,
      });
    });

    it("a refund while Paystack is down is unknown, and nothing is refunded", async () => {
      const { ref } = await paidAttempt(250_000n);
      standIn.knobs.down = ["refund"];
      assert.deepEqual(await processor.refund({ idempotencyKey: "rf_down", attempt: ref, amount: 1_000n }, signal()), {
        kind: "unknown",
        reason: "Paystack answered 503 to POST /refund",
      });
      assert.equal(standIn.refundsOf(ref.idempotencyKey).length, 0);
    });
  });
});

