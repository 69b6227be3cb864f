import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { createTestModeProcessor, testWebhookKey } from "../../src/processor/test-mode-processor.js";
import type { RequestOutcome } from "../../src/observability/request-observer.js";
import { createRestClient, expectJson, type PaymentIntentJson, type PaymentIntentListItemJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { confirm, createIntent, getPage, openCheckout, seeOther } from "./support/checkout-client.js";

const callbackUrl = "https://shop.example/return?order=42";
const checkoutSecret = randomBytes(32).toString("base64url");

/**
 * Bank transfer and USSD in test mode (issue 19 §4): the customer's confirm
 * leaves the attempt processing, and the test processor's delayed, signed
 * webhook to our own POST /processor-webhooks/test settles it, on the
 * server's own store (memory, or PostgreSQL with TEST_STORE=postgres).
 */
describe("bank transfer and USSD settle by the test processor's webhook", () => {
  let server: TestServer;
  let client: RestClient;
  const requests: RequestOutcome[] = [];

  before(async () => {
    server = await startTestServer({
      settings: { TEST_PROCESSOR_WEBHOOK_DELAY_MS: "300", CHECKOUT_SECRET: checkoutSecret },
      onRequestEnd: (outcome) => void requests.push(outcome),
    });
    client = createRestClient(server);
  });
  after(() => server.close());

  const read = async (intent: PaymentIntentJson) => expectJson<PaymentIntentListItemJson>(await client.getIntent(intent.id), 200);
  const attemptsOf = (intent: PaymentIntentJson) => server.intents.listAttempts("merchantA", intent.id);
  /** Reads the intent until it leaves processing (bounded: the webhook comes 300 ms after the confirm). */
  async function settled(intent: PaymentIntentJson): Promise<PaymentIntentListItemJson> {
    for (let i = 0; i < 100; i++) {
      const now = await read(intent);
      if (now.status !== "processing") return now;
      await sleep(50);
    }
    assert.fail(`payment intent ${intent.id} is still processing`);
  }
  const webhookPosts = () => requests.filter((r) => r.route === "/processor-webhooks/{processor}");

  for (const method of ["bank_transfer", "ussd"]) {
    it(`keeps a confirmed ${method} processing, then settles it successful by a signed webhook`, async () => {
      const intent = await createIntent(client, { paymentMethod: [method], callbackUrl });
      const opened = await openCheckout(intent.checkoutLink);
      const postsBefore = webhookPosts().length;
      const answer = seeOther(await confirm(intent.checkoutLink, opened, method), server.url);
      // The customer waits on our result page, which refreshes to the return URL: not at the merchant yet.
      assert.equal(answer.pathname, `/checkout/${opened.token}/result`);
      const [open] = await attemptsOf(intent);
      assert.equal(open?.outcome, "processing");
      assert.match(open.processorReference ?? "", /^txn_test_/);
      assert.equal((await read(intent)).status, "processing");

      const paid = await settled(intent);
      assert.equal(paid.status, "successful");
      const [attempt] = await attemptsOf(intent);
      assert.equal(attempt?.outcome, "succeeded");
      assert.equal(paid.transaction, open.processorReference);
      // The webhook path brought it: one verified notice, answered 200.
      const posts = webhookPosts().slice(postsBefore);
      assert.ok(posts.some((p) => p.status === 200), `webhook posts: ${JSON.stringify(posts.map((p) => p.status))}`);
      assert.ok(posts.every((p) => p.status === 200));
      const types = (await server.recordedWebhooks.events.list({ merchantId: "merchantA", livemode: false, limit: 10, paymentIntentId: intent.id })).map((e) => e.type).reverse();
      assert.deepEqual(types, ["payment_intent.created", "payment_intent.processing", "payment_intent.succeeded"]);
      // Back from the result page's refresh, the customer goes on to the merchant.
      const back = seeOther(await getPage(`${server.url}/checkout/${opened.token}/return?attempt=${attempt.id}`), server.url);
      assert.equal(back.origin, "https://shop.example");
      assert.equal(back.searchParams.get("status"), "successful");
      assert.equal(back.searchParams.get("attempt_status"), "succeeded");
    });
  }

  it("verifies the notices with a key derived from CHECKOUT_SECRET, which every instance shares", async () => {
    const intent = await createIntent(client, { paymentMethod: ["bank_transfer"] });
    await confirm(intent.checkoutLink, await openCheckout(intent.checkoutLink), "bank_transfer");
    const [attempt] = await attemptsOf(intent);
    assert.ok(attempt);
    const notice = { kind: "attempt", noticeId: "evt_other", idempotencyKey: attempt.id, outcome: { kind: "declined", reference: null, reason: "forged" } } as const;
    // Another deployment's test processor (another secret) is refused and changes nothing.
    const stranger = createTestModeProcessor({ webhookKey: testWebhookKey(randomBytes(32).toString("base64url")) }).signNotice(notice);
    const refused = await fetch(`${server.url}/processor-webhooks/test`, { method: "POST", headers: stranger.headers, body: stranger.body });
    assert.equal(refused.status, 401);
    await refused.arrayBuffer();
    assert.equal((await attemptsOf(intent))[0]?.outcome, "processing");
    // A sibling instance's test processor (the same secret) is heard: here a decline that arrives first.
    const sibling = createTestModeProcessor({ webhookKey: testWebhookKey(checkoutSecret) }).signNotice(notice);
    const heard = await fetch(`${server.url}/processor-webhooks/test`, { method: "POST", headers: sibling.headers, body: sibling.body });
    assert.equal(heard.status, 200);
    await heard.arrayBuffer();
    assert.equal((await read(intent)).status, "pending");
    assert.equal((await attemptsOf(intent))[0]?.outcome, "declined");
  });
});
