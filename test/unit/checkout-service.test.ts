import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { CreatePaymentIntentRequestSchema, ListPaymentIntentsRequestSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import type { PaymentIntentStatus } from "../../src/domain/payment-intent.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { silentLogger } from "../../src/lib/logger.js";
import { createProcessorRegistry } from "../../src/processor/processor-registry.js";
import { createTestModeProcessor, testCards, type TestModeProcessor } from "../../src/processor/test-mode-processor.js";
import { createSettleAttempt } from "../../src/service/attempt-settler.js";
import { createLoggingLateSuccessHandler } from "../../src/service/late-success-handler.js";
import { createCheckoutService, type CheckoutService } from "../../src/service/checkout-service.js";
import { createPageTokenCodec } from "../../src/service/page-token.js";
import type { PaymentEvents } from "../../src/service/payment-events.js";
import { createPaymentExpiry, type PaymentExpiry } from "../../src/service/payment-expiry.js";
import { createPaymentIntentService, type PaymentIntentService } from "../../src/service/payment-intent-service.js";
import { createPaymentIntentPresenter } from "../../src/service/payment-intent-presenter.js";
import { createPaymentMethodCatalogue } from "../../src/service/payment-method-catalogue.js";
import { createMemoryPaymentIntentStore } from "../../src/store/memory/memory-payment-intent-store.js";
import { createMemorySettlementAccountStore } from "../../src/store/memory/memory-settlement-account-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";

const day = 86_400_000;
const goodCard = { number: "4084 0840 8408 4081", expiry: "12/39", cvv: "123" };
const declinedCard = { number: "4000 0000 0000 0002", expiry: "12/39", cvv: "123" };

describe("payment lifecycle (service layer, injected clock)", () => {
  let clock: ManualClock;
  let intents: PaymentIntentStore;
  let api: PaymentIntentService;
  let checkout: CheckoutService;
  let expiry: PaymentExpiry;
  let transitions: string[];
  let processor: TestModeProcessor;
  /** What the test processor's webhook sent (to where, with what body), instead of POSTing it. */
  let notices: { url: string; body: string; verified: string }[];

  afterEach(() => processor.close());

  beforeEach(() => {
    clock = createManualClock("2026-01-10T09:00:00.000Z");
    intents = createMemoryPaymentIntentStore();
    transitions = [];
    const events: PaymentEvents = {
      created() {},
      transitioned: (_merchant, _id, from, to) => void transitions.push(`${from}>${to}`),
    };
    const catalogue = createPaymentMethodCatalogue(["paystack"]);
    const ids = createIdGenerator(clock);
    api = createPaymentIntentService({
      intents,
      accounts: createMemorySettlementAccountStore(),
      catalogue,
      presenter: createPaymentIntentPresenter({ publicUrl: "https://pay.example.com", catalogue }),
      pageTokens: createPageTokenCodec("s".repeat(32)),
      clock,
      ids,
      events,
      checkoutTtlMs: day,
    });
    expiry = createPaymentExpiry({ intents, clock, events });
    notices = [];
    processor = createTestModeProcessor({
      publicUrl: "https://pay.example.com",
      // Long enough that the status check right after the confirm comes before the money "arrives", on a busy machine too.
      webhookDelayMs: 500,
      deliver: async (url, notice) => {
        const parsed = processor.parseWebhook(notice.headers, Buffer.from(notice.body));
        notices.push({ url, body: notice.body, verified: parsed.kind === "attempt" ? `${parsed.idempotencyKey}:${parsed.outcome.kind}` : parsed.kind });
        return true;
      },
    });
    const logger = silentLogger;
    checkout = createCheckoutService({
      intents,
      merchants: { nameOf: async (id) => (id === "m1" ? "Ada Stores" : undefined) },
      processors: createProcessorRegistry([processor]),
      catalogue,
      expiry,
      events,
      settle: createSettleAttempt({ intents, lateSuccess: createLoggingLateSuccessHandler({ logger }), events, clock, logger, maxAttempts: 3 }),
      clock,
      ids,
      maxAttempts: 3,
      publicUrl: "https://pay.example.com",
      processorTimeoutMs: 1_000,
    });
  });

  async function newIntent(reference = "order-1") {
    const { intent } = await api.create("m1", create(CreatePaymentIntentRequestSchema, {
      amount: 50_000n,
      customerEmail: "ada@example.com",
      clientReference: reference,
    }), false);
    return { id: intent.id, token: intent.checkoutLink.split("/").pop()! };
  }

  async function statusOf(id: string): Promise<PaymentIntentStatus> {
    return (await intents.findById("m1", id))!.status;
  }

  it("shows a pending intent with its merchant and every allowed method", async () => {
    const { token } = await newIntent();
    const view = await checkout.view(token);
    assert.equal(view.merchantName, "Ada Stores");
    assert.deepEqual(view.methods.map((m) => m.method.type), ["card", "bank_transfer", "ussd", "paystack"]);
    assert.equal(view.attemptsLeft, 3);
    assert.equal(view.testMode, true);
  });

  it("pending → successful on a good card: transaction set, updatedAt moved, one attempt recorded", async () => {
    const { id, token } = await newIntent();
    clock.advance(5_000);
    const result = await checkout.pay(token, { method: "card", card: goodCard });
    assert.equal(result.kind, "attempted");
    if (result.kind !== "attempted") return;
    assert.equal(result.intent.status, "successful");
    assert.equal(result.intent.transaction, result.attempt.processorReference);
    assert.equal(result.intent.updatedAt.toISOString(), "2026-01-10T09:00:05.000Z");
    assert.deepEqual(
      (await intents.listAttempts("m1", id)).map((a) => [a.method, a.outcome, a.amount, a.createdAt.toISOString()]),
      [["card", "succeeded", 50_000n, "2026-01-10T09:00:05.000Z"]],
    );
    assert.deepEqual(transitions, ["pending>processing", "processing>successful"]);
    assert.deepEqual([...processor.charges()], [[result.attempt.id, 1]], "charged once, under the attempt's key");
    assert.equal((await checkout.view(token)).methods.length, 0, "a paid intent offers no payment");
  });

  it("keeps the intent pending after a decline, and fails it after the third", async () => {
    const { id, token } = await newIntent();
    for (const left of [2, 1]) {
      const result = await checkout.pay(token, { method: "card", card: declinedCard });
      assert.equal(result.kind === "attempted" && result.attempt.outcome, "declined");
      assert.equal(await statusOf(id), "pending");
      assert.equal((await checkout.view(token)).attemptsLeft, left);
    }
    const third = await checkout.pay(token, { method: "card", card: declinedCard });
    assert.equal(third.kind === "attempted" && third.intent.status, "failed");
    assert.deepEqual(transitions, ["pending>processing", "processing>pending", "pending>processing", "processing>pending", "pending>processing", "processing>failed"]);
    assert.equal((await checkout.pay(token, { method: "card", card: goodCard })).kind, "not-payable");
    assert.equal((await intents.listAttempts("m1", id)).length, 3);
  });

  it("declines any other valid card with a hint to use a test card", async () => {
    const { token } = await newIntent();
    const result = await checkout.pay(token, { method: "card", card: { number: "4111 1111 1111 1111", expiry: "01/40", cvv: "999" } });
    assert.match(result.kind === "attempted" ? (result.attempt.declineReason ?? "") : "", /use a test card/);
  });

  it("treats a mistyped card as a form error, not an attempt", async () => {
    const { id, token } = await newIntent();
    const result = await checkout.pay(token, { method: "card", card: { number: "4084 0840 8408 4082", expiry: "13/30", cvv: "1" } });
    assert.equal(result.kind, "form-errors");
    assert.deepEqual(result.kind === "form-errors" && result.errors.map((e) => e.field), ["number", "expiry", "cvv"]);
    assert.deepEqual(await intents.listAttempts("m1", id), []);
  });

  it("refuses a card that expired last month", async () => {
    const { token } = await newIntent();
    const result = await checkout.pay(token, { method: "card", card: { ...goodCard, expiry: "12/25" } });
    assert.deepEqual(result.kind === "form-errors" && result.errors, [{ field: "expiry", message: "This card has expired." }]);
  });

  it("succeeds a processor once confirmed", async () => {
    const { token } = await newIntent("order-paystack");
    const result = await checkout.pay(token, { method: "paystack" });
    assert.equal(result.kind === "attempted" && result.intent.status, "successful");
  });

  for (const method of ["bank_transfer", "ussd"]) {
    it(`keeps ${method} processing until its money arrives, then sends one signed notice to our own webhook`, async () => {
      const { token } = await newIntent(`order-${method}`);
      const result = await checkout.pay(token, { method });
      assert.ok(result.kind === "attempted");
      assert.equal(result.intent.status, "processing");
      assert.equal(result.attempt.outcome, "processing");
      assert.match(result.attempt.processorReference ?? "", /^txn_test_/);
      assert.deepEqual([...processor.charges()], [], "nothing is taken before the money arrives");
      const ref = { idempotencyKey: result.attempt.id, reference: result.attempt.processorReference, amount: result.attempt.amount };
      assert.equal((await processor.status(ref, AbortSignal.timeout(1000))).kind, "pending");
      for (let i = 0; i < 1000 && notices.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(notices.map((n) => [n.url, n.verified]), [["https://pay.example.com/processor-webhooks/test", `${result.attempt.id}:succeeded`]]);
      assert.deepEqual([...processor.charges()], [[result.attempt.id, 1]]);
      const after = await processor.status(ref, AbortSignal.timeout(1000));
      assert.deepEqual(after, { kind: "succeeded", reference: result.attempt.processorReference, amount: 50_000n, currency: "NGN" });
    });
  }

  it("refuses a method the intent does not offer", async () => {
    const { intent } = await api.create("m1", create(CreatePaymentIntentRequestSchema, {
      amount: 100n,
      customerEmail: "ada@example.com",
      clientReference: "card-only",
      paymentMethod: ["card"],
    }), false);
    await assert.rejects(
      checkout.pay(intent.checkoutLink.split("/").pop()!, { method: "ussd" }),
      (e: ConnectError) => e.code === Code.InvalidArgument,
    );
  });

  it("pending → expired on read once CHECKOUT_TTL has passed, with no payment possible", async () => {
    const { id, token } = await newIntent();
    clock.advance(day - 1);
    assert.equal((await checkout.view(token)).intent.status, "pending");
    clock.advance(1);
    const view = await checkout.view(token);
    assert.equal(view.intent.status, "expired");
    assert.equal(view.intent.updatedAt.toISOString(), clock.iso());
    assert.deepEqual(view.methods, []);
    assert.equal((await checkout.pay(token, { method: "ussd" })).kind, "not-payable");
    assert.deepEqual(await intents.listAttempts("m1", id), []);
    assert.deepEqual(transitions, ["pending>expired"]);
    assert.equal((await api.get("m1", id, false)).status, "expired");
  });

  it("pending → expired by the sweep for intents nobody reads", async () => {
    const first = await newIntent("a");
    clock.advance(1000);
    const second = await newIntent("b");
    clock.advance(day - 500);
    assert.equal(await expiry.sweep(), 1);
    assert.equal(await statusOf(first.id), "expired");
    assert.equal(await statusOf(second.id), "pending");
    clock.advance(500);
    assert.equal(await expiry.sweep(), 1);
    assert.deepEqual(transitions, ["pending>expired", "pending>expired"]);
  });

  it("a list filtered by status never shows a lapsed intent as pending", async () => {
    await newIntent();
    clock.advance(day);
    assert.deepEqual((await api.list("m1", create(ListPaymentIntentsRequestSchema, { pageSize: 10, status: "pending" }), false)).paymentIntents, []);
    const expired = await api.list("m1", create(ListPaymentIntentsRequestSchema, { pageSize: 10, status: "expired" }), false);
    assert.equal(expired.paymentIntents.length, 1);
  });

  it("pending → cancelled by delete; then the page shows cancelled and refuses payment", async () => {
    const { id, token } = await newIntent();
    await api.delete("m1", id, false);
    assert.deepEqual(transitions, ["pending>cancelled"]);
    const view = await checkout.view(token);
    assert.equal(view.intent.status, "cancelled");
    assert.deepEqual(view.methods, []);
    const refused = await checkout.pay(token, { method: "ussd" });
    assert.equal(refused.kind === "not-payable" && refused.view.intent.status, "cancelled");
  });

  it("refuses to delete a successful or expired intent with FailedPrecondition", async () => {
    const paid = await newIntent("paid");
    await checkout.pay(paid.token, { method: "paystack" });
    await assert.rejects(api.delete("m1", paid.id, false), (e: ConnectError) => e.code === Code.FailedPrecondition && /successful/.test(e.rawMessage));
    const lapsed = await newIntent("lapsed");
    clock.advance(day);
    await assert.rejects(api.delete("m1", lapsed.id, false), (e: ConnectError) => e.code === Code.FailedPrecondition && /expired/.test(e.rawMessage));
  });

  it("two tabs paying at once: exactly one successful attempt", async () => {
    const { id, token } = await newIntent();
    const outcomes = await Promise.all([
      checkout.pay(token, { method: "card", card: goodCard }),
      checkout.pay(token, { method: "card", card: goodCard }),
      checkout.pay(token, { method: "paystack" }),
    ]);
    assert.deepEqual(outcomes.map((o) => o.kind).sort(), ["attempted", "not-payable", "not-payable"]);
    const attempts = await intents.listAttempts("m1", id);
    assert.equal(attempts.filter((a) => a.outcome === "succeeded").length, 1);
    assert.equal(attempts.length, 1);
  });

  it("needs 3-D Secure: requires_action with the test page as nextAction, then the return settles the customer's answer", async () => {
    const { id, token } = await newIntent();
    const result = await checkout.pay(token, { method: "card", card: { ...goodCard, number: testCards.needs3ds } });
    assert.equal(result.kind, "attempted");
    if (result.kind !== "attempted") return;
    assert.equal(result.attempt.outcome, "requires_action");
    const url = `https://pay.example.com/checkout/test-3ds/${result.attempt.id}`;
    assert.equal(result.intent.status, "requires_action");
    assert.equal(result.intent.nextActionUrl, url);
    assert.deepEqual((await api.get("m1", id, false)).nextAction, { $typeName: "payments.v2.NextAction", type: "redirect", url });
    assert.equal(processor.decide(result.attempt.id, true), `https://pay.example.com/checkout/${token}/return?attempt=${result.attempt.id}`);
    const back = await checkout.returned(token, result.attempt.id);
    assert.equal(back?.attempt.outcome, "succeeded");
    assert.equal(back?.intent.status, "successful");
    assert.equal(back?.intent.nextActionUrl, null);
    assert.deepEqual(transitions, ["pending>processing", "processing>requires_action", "requires_action>successful"]);
  });

  it("times out with the money taken: the attempt and intent stay processing, and a later status check settles it once", async () => {
    const { id, token } = await newIntent();
    const result = await checkout.pay(token, { method: "card", card: { ...goodCard, number: testCards.timesOut } });
    assert.equal(result.kind === "attempted" && result.attempt.outcome, "processing");
    assert.equal(await statusOf(id), "processing");
    // Not payable again, nor deletable, while the outcome is open.
    assert.equal((await checkout.pay(token, { method: "card", card: goodCard })).kind, "not-payable");
    await assert.rejects(api.delete("m1", id, false), (e: ConnectError) => e.code === Code.FailedPrecondition && /processing/.test(e.rawMessage));
    const attemptId = result.kind === "attempted" ? result.attempt.id : "";
    const back = await checkout.returned(token, attemptId);
    assert.equal(back?.intent.status, "successful");
    assert.deepEqual([...processor.charges()], [[attemptId, 1]]);
  });

  it("answers NotFound for an unknown token", async () => {
    await assert.rejects(checkout.view("no-such-token-000000"), (e: ConnectError) => e.code === Code.NotFound);
  });
});
