import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import type { PaymentAttemptRecord } from "../../src/domain/payment-attempt.js";
import { abandonedFinalAfterMs, unreachableReason } from "../../src/processor/paystack/paystack-processor.js";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { startPaystackStandIn, type PaystackStandIn } from "../support/paystack-stand-in.js";
import { createRestClient, expectJson, uniqueReference, type EventJson, type PaymentIntentJson, type RefundJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, testPaystackKey, type TestServer } from "../support/test-server.js";
import { createIntent, getPage, openCheckout, payUrl, postForm, seeOther, textOf, tokenOf, type PageResponse } from "./support/checkout-client.js";

/**
 * "Pay with Paystack" end to end (issue 20 §1): the whole service, as
 * composeService builds it, against the Paystack stand-in over HTTP. The
 * customer's browser is played with plain requests (test/browser has the
 * Chromium run); intents are created and read over REST and over gRPC.
 */
describe("Pay with Paystack, end to end against the stand-in", () => {
  let standIn: PaystackStandIn;
  let server: TestServer;
  let client: RestClient;
  let grpc: Client<typeof PaymentIntentService>;
  let clock: ManualClock;
  let hookUrl: string;
  const callbackUrl = "https://shop.example.com/return?order=7";

  before(async () => {
    standIn = await startPaystackStandIn({ secretKey: testPaystackKey });
    clock = createManualClock(new Date());
    // The reconciler runs often, so a test that moves the clock sees it act at once.
    server = await startTestServer({ clock, settings: { PAYSTACK_BASE_URL: standIn.url, RECONCILE_INTERVAL_MS: "50" } });
    client = createRestClient(server);
    grpc = createClient(PaymentIntentService, createGrpcTransport({ baseUrl: server.url }));
    hookUrl = `${server.url}/processor-webhooks/paystack`;
    expectJson(await client.request("POST", "/v2/webhook-endpoints", { json: { url: "https://shop.example.com/hooks", eventTypes: ["payment_intent.succeeded"] } }), 201);
  });
  after(async () => {
    await server?.close();
    await standIn?.close();
  });
  beforeEach(() => {
    Object.assign(standIn.knobs, { down: [], slowMs: 0, tooManyRetryAfter: null, mismatchKobo: 0, webhookUrl: hookUrl, webhookTiming: "before-return" });
  });

  const getIntent = async (id: string) => expectJson<PaymentIntentJson>(await client.getIntent(id), 200);
  const eventTypes = async (id: string) =>
    expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${id}`), 200).events.map((e) => e.type).reverse();

  /** The customer chooses "Pay with Paystack": the 303 leads to the stand-in's page. */
  async function choosePaystack(intent: { id: string; checkoutLink: string }): Promise<{ attempt: PaymentAttemptRecord; page: URL }> {
    const opened = await openCheckout(intent.checkoutLink);
    assert.match(textOf(opened.html), /Pay with Paystack/);
    const res = await postForm(payUrl(intent.checkoutLink), { csrf: opened.csrf, method: "paystack" }, { cookie: opened.cookie });
    const page = seeOther(res, intent.checkoutLink);
    assert.equal(page.origin, standIn.url, "sent to Paystack's page");
    const attempts = await server.intents.listAttempts("merchantA", intent.id);
    assert.equal(attempts.length, 1);
    return { attempt: attempts[0]!, page };
  }

  /** The customer pays (or cancels) on the stand-in's page; answers where Paystack sends them back. */
  async function onPaystackPage(page: URL, action: "pay" | "cancel"): Promise<URL> {
    const res = await fetch(`${page.href}/${action}`, { method: "POST", redirect: "manual" });
    await res.arrayBuffer();
    assert.equal(res.status, 302);
    return new URL(res.headers.get("location")!);
  }

  /** The merchant's callback the customer is sent on to, as its query. */
  function callbackQuery(res: PageResponse): Record<string, string> {
    const target = seeOther(res, server.url);
    assert.equal(`${target.origin}${target.pathname}`, "https://shop.example.com/return");
    return Object.fromEntries(target.searchParams);
  }

  /** Waits for the merchant's payment_intent.succeeded webhook about the intent (answering every delivery 200). */
  async function succeededDelivered(id: string): Promise<Record<string, unknown>> {
    for (;;) {
      const held = await server.receivers.next();
      held.answer({ outcome: "success", statusCode: 200 });
      const body = JSON.parse(held.request.body) as { type: string; data: Record<string, unknown> };
      if (body.type === "payment_intent.succeeded" && body.data["id"] === id) return body.data;
    }
  }

  async function until(check: () => Promise<boolean>, what: string) {
    const deadline = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it("REST, the return first: initialize as the issue says, requires_action with Paystack's page, then verify settles it and the customer lands on callbackUrl; the later webhook changes nothing", async () => {
    standIn.knobs.webhookTiming = "after-return";
    standIn.knobs.webhookUrl = null;
    const intent = await createIntent(client, { amount: 250_000, paymentMethod: ["card", "paystack"], callbackUrl });
    const { attempt, page } = await choosePaystack(intent);
    assert.deepEqual([attempt.processor, attempt.method, attempt.outcome, attempt.processorReference], ["paystack", "paystack", "requires_action", attempt.id]);

    const initialize = standIn.exchanges.find((e) => e.path === "/transaction/initialize" && (e.body as { reference?: string }).reference === attempt.id)!;
    assert.deepEqual(initialize.body, {
      email: "ada@example.com",
      amount: 250_000,
      currency: "NGN",
      reference: attempt.id,
      callback_url: `${server.url}/checkout/${tokenOf(intent.checkoutLink)}/return?attempt=${attempt.id}`,
      metadata: { payment_intent_id: intent.id, amount_kobo: "250000" },
    });
    const waiting = await getIntent(intent.id);
    assert.equal(waiting.status, "requires_action");
    assert.deepEqual(waiting.nextAction, { type: "redirect", url: page.href });

    const back = await onPaystackPage(page, "pay");
    assert.equal(back.pathname, `/checkout/${tokenOf(intent.checkoutLink)}/return`);
    assert.equal(back.searchParams.get("reference"), attempt.id);
    assert.deepEqual(callbackQuery(await getPage(back.href)), {
      order: "7",
      reference: intent.clientReference,
      id: intent.id,
      status: "successful",
      attempt_status: "succeeded",
    });
    const paid = await getIntent(intent.id);
    assert.deepEqual([paid.status, paid.transaction, paid.nextAction], ["successful", attempt.id, null]);
    assert.equal((await succeededDelivered(intent.id))["transaction"], attempt.id);

    // Paystack's charge.success arrives afterwards: answered 200, nothing changes.
    assert.equal(await standIn.sendWebhook(hookUrl, standIn.chargeSuccessEvent(attempt.id)), 200);
    assert.deepEqual(await getIntent(intent.id), paid);
    assert.deepEqual(await eventTypes(intent.id), [
      "payment_intent.created",
      "payment_intent.processing",
      "payment_intent.requires_action",
      "payment_intent.succeeded",
    ]);
    // Coming back again ends where the first return did.
    assert.equal(callbackQuery(await getPage(back.href)).status, "successful");
  });

  it("gRPC, the webhook first: charge.success settles the attempt before the customer is back; the return and a replay change nothing", async () => {
    const created = await grpc.createPaymentIntent(
      { amount: 120_000n, customerEmail: "ada@example.com", clientReference: uniqueReference("grpc"), paymentMethod: ["paystack"], callbackUrl },
      { headers: { authorization: server.bearer() } },
    );
    const { attempt, page } = await choosePaystack(created);
    const asked = { headers: { authorization: server.bearer() } };
    const waiting = await grpc.getPaymentIntent({ id: created.id }, asked);
    assert.equal(waiting.status, "requires_action");
    assert.deepEqual([waiting.nextAction?.type, waiting.nextAction?.url], ["redirect", page.href]);

    const back = await onPaystackPage(page, "pay");
    assert.deepEqual(standIn.webhooksSent.at(-1), { event: "charge.success", status: 200 }, "answered 200 after the commit");
    const paid = await grpc.getPaymentIntent({ id: created.id }, asked);
    assert.deepEqual([paid.status, paid.transaction], ["successful", attempt.id]);
    await succeededDelivered(created.id);

    const verifiesBefore = standIn.exchanges.filter((e) => e.path.startsWith("/transaction/verify/")).length;
    assert.deepEqual(callbackQuery(await getPage(back.href)), {
      order: "7",
      reference: created.clientReference,
      id: created.id,
      status: "successful",
      attempt_status: "succeeded",
    });
    assert.equal(standIn.exchanges.filter((e) => e.path.startsWith("/transaction/verify/")).length, verifiesBefore, "a settled attempt is not verified again");
    assert.equal(await standIn.sendWebhook(hookUrl, standIn.chargeSuccessEvent(attempt.id)), 200);
    assert.deepEqual(await grpc.getPaymentIntent({ id: created.id }, asked), paid);
    assert.equal((await eventTypes(created.id)).filter((type) => type === "payment_intent.succeeded").length, 1);
  });

  it("an amount Paystack took that is not the intent's is flagged, never paid: the attempt is declined amount_mismatch", async () => {
    standIn.knobs.mismatchKobo = -40_000;
    const intent = await createIntent(client, { amount: 90_000, paymentMethod: ["paystack"], callbackUrl });
    const { attempt, page } = await choosePaystack(intent);
    const back = await onPaystackPage(page, "pay");
    assert.deepEqual(standIn.webhooksSent.at(-1), { event: "charge.success", status: 200 });
    assert.deepEqual(callbackQuery(await getPage(back.href)), {
      order: "7",
      reference: intent.clientReference,
      id: intent.id,
      status: "pending",
      attempt_status: "declined",
    });
    const after = await getIntent(intent.id);
    assert.deepEqual([after.status, after.transaction], ["pending", null]);
    const settled = await server.intents.findAttempt("merchantA", attempt.id);
    assert.deepEqual([settled?.outcome, settled?.declineReason], ["declined", "amount_mismatch"]);
    assert.deepEqual(await eventTypes(intent.id), [
      "payment_intent.created",
      "payment_intent.processing",
      "payment_intent.requires_action",
      "payment_intent.payment_failed",
    ]);
  });

  it("the money check holds without our metadata too: a signed charge.success for another amount is declined amount_mismatch, never paid", async () => {
    standIn.knobs.webhookUrl = null;
    standIn.knobs.mismatchKobo = 500;
    const intent = await createIntent(client, { amount: 70_000, paymentMethod: ["paystack"], callbackUrl });
    const { attempt, page } = await choosePaystack(intent);
    await onPaystackPage(page, "pay");
    const event = standIn.chargeSuccessEvent(attempt.id);
    assert.equal(await standIn.sendWebhook(hookUrl, { ...event, data: { ...event.data, metadata: "" } }), 200);
    const settled = await server.intents.findAttempt("merchantA", attempt.id);
    assert.deepEqual([settled?.outcome, settled?.declineReason], ["declined", "amount_mismatch"]);
    assert.equal((await getIntent(intent.id)).status, "pending");
  });

  it("a webhook with a wrong or missing signature is 401 and changes nothing", async () => {
    standIn.knobs.webhookUrl = null;
    const intent = await createIntent(client, { paymentMethod: ["paystack"], callbackUrl });
    const { attempt, page } = await choosePaystack(intent);
    await onPaystackPage(page, "pay");
    const before = await getIntent(intent.id);
    const event = standIn.chargeSuccessEvent(attempt.id);
    assert.equal(await standIn.sendWebhook(hookUrl, event, "sk_test_" + "0".repeat(40)), 401);
    const unsigned = await fetch(hookUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(event) });
    assert.equal(unsigned.status, 401);
    assert.deepEqual(await unsigned.json(), { status: 401, message: "the notice did not verify" });
    assert.deepEqual(await getIntent(intent.id), before);
    assert.equal(before.status, "requires_action");
    assert.equal((await server.intents.findAttempt("merchantA", attempt.id))?.outcome, "requires_action");
  });

  it("a customer who cancels on Paystack's page comes back declined and may try again; the link still works", async () => {
    const intent = await createIntent(client, { paymentMethod: ["card", "paystack"], callbackUrl });
    const { page } = await choosePaystack(intent);
    const back = await onPaystackPage(page, "cancel");
    assert.deepEqual(callbackQuery(await getPage(back.href)), {
      order: "7",
      reference: intent.clientReference,
      id: intent.id,
      status: "pending",
      attempt_status: "declined",
    });
    const again = await openCheckout(intent.checkoutLink);
    assert.match(textOf(again.html), /2 attempts left/);
  });

  it("abandoned while the customer may still be on Paystack's page is not declined by the reconciler until 30 minutes have passed", async () => {
    standIn.knobs.webhookUrl = null;
    const intent = await createIntent(client, { paymentMethod: ["paystack"], callbackUrl });
    const { attempt } = await choosePaystack(intent);
    const verifies = () => standIn.exchanges.filter((e) => e.path === `/transaction/verify/${attempt.id}`).length;
    // Twenty seconds at a time past the first check (PROCESSOR_TIMEOUT_MS + 30 s) and the next ones: verified, still waiting.
    const began = clock.now().getTime();
    await until(async () => (clock.advance(20_000), verifies() >= 3), "the reconciler verified the attempt three times");
    assert.ok(clock.now().getTime() - began < abandonedFinalAfterMs - 5 * 60_000, "verified within the first minutes");
    assert.equal((await server.intents.findAttempt("merchantA", attempt.id))?.outcome, "requires_action");
    assert.equal((await getIntent(intent.id)).status, "requires_action");
    // Past abandonedFinalAfterMs: declined, the intent can be paid again.
    // (The clock keeps moving: a round in flight at the jump may have postponed the next check by minutes.)
    clock.advance(abandonedFinalAfterMs);
    await until(
      async () => (clock.advance(30_000), (await server.intents.findAttempt("merchantA", attempt.id))?.outcome === "declined"),
      "the reconciler declined the abandoned attempt",
    );
    assert.equal((await getIntent(intent.id)).status, "pending");
  });

  it("Paystack down during verify: the returning customer waits on the processing page, and the reconciler settles the payment later", async () => {
    standIn.knobs.webhookUrl = null;
    const intent = await createIntent(client, { paymentMethod: ["paystack"], callbackUrl });
    const { attempt, page } = await choosePaystack(intent);
    const back = await onPaystackPage(page, "pay");
    standIn.knobs.down = ["verify"];
    const waiting = await getPage(back.href);
    assert.equal(waiting.status, 200);
    assert.match(textOf(waiting.html), /Payment processing/);
    assert.equal((await getIntent(intent.id)).status, "requires_action");
    standIn.knobs.down = [];
    clock.advance(5 * 60_000);
    await until(async () => (clock.advance(30_000), (await getIntent(intent.id)).status === "successful"), "the reconciler settled the payment");
    assert.equal((await getIntent(intent.id)).transaction, attempt.id);
    assert.equal(callbackQuery(await getPage(back.href)).status, "successful");
  });

  it("Paystack down during initialize: the attempt is declined with a retry message, nothing charged, and the customer can pay again", async () => {
    standIn.knobs.down = ["initialize"];
    const intent = await createIntent(client, { paymentMethod: ["paystack"] });
    const opened = await openCheckout(intent.checkoutLink);
    const res = await postForm(payUrl(intent.checkoutLink), { csrf: opened.csrf, method: "paystack" }, { cookie: opened.cookie });
    const result = await getPage(seeOther(res, intent.checkoutLink).href);
    assert.match(textOf(result.html), new RegExp(unreachableReason.replace(/[.,]/g, "\\$&")));
    assert.match(textOf(result.html), /Try again/);
    const [attempt] = await server.intents.listAttempts("merchantA", intent.id);
    assert.deepEqual([attempt?.outcome, attempt?.processorReference], ["declined", null]);
    assert.equal(standIn.transaction(attempt!.id), undefined, "Paystack has no transaction to charge");
    assert.equal((await getIntent(intent.id)).status, "pending");

    standIn.knobs.down = [];
    const { page } = await choosePaystackAgain(intent);
    assert.equal(page.origin, standIn.url);
  });

  it("refunds a Paystack payment through Paystack: a partial then a full refund, each settled by Paystack's refund webhook", async () => {
    const intent = await createIntent(client, { amount: 100_000, paymentMethod: ["paystack"], callbackUrl });
    const { attempt, page } = await choosePaystack(intent);
    assert.equal(callbackQuery(await getPage((await onPaystackPage(page, "pay")).href)).status, "successful");
    const refund = async (body: Record<string, unknown>) =>
      expectJson<RefundJson>(
        await client.request("POST", `/v2/payment-intents/${intent.id}/refunds`, { json: { reason: "requested_by_customer", clientReference: uniqueReference("rf"), ...body } }),
        201,
      );
    const partial = await refund({ amount: 30_000 });
    const rest = await refund({});
    assert.deepEqual([partial.amount, rest.amount], ["30000", "70000"]);
    const statusOf = async (id: string) => expectJson<RefundJson>(await client.request("GET", `/v2/refunds/${id}`), 200).status;
    await until(async () => (await statusOf(partial.id)) === "successful" && (await statusOf(rest.id)) === "successful", "Paystack's refund.processed settled both");
    assert.deepEqual(
      standIn.refundsOf(attempt.id).map((r) => [r.amount, r.status, r.merchantNote]),
      [
        [30_000, "processed", `payment-intents refund ${partial.id}`],
        [70_000, "processed", `payment-intents refund ${rest.id}`],
      ],
    );
    const refunded = await getIntent(intent.id);
    assert.deepEqual([refunded.status, refunded.amountRefunded], ["successful", "100000"]);
  });

  /** As choosePaystack, for an intent that already has attempts. */
  async function choosePaystackAgain(intent: { checkoutLink: string }): Promise<{ page: URL }> {
    const opened = await openCheckout(intent.checkoutLink);
    const res = await postForm(payUrl(intent.checkoutLink), { csrf: opened.csrf, method: "paystack" }, { cookie: opened.cookie });
    return { page: seeOther(res, intent.checkoutLink) };
  }
});
