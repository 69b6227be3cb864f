import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ConfigError } from "../../src/config.js";
import { startTestServer, TestHelperError, type TestServer } from "../../src/testing/index.js";

/** GET or POST JSON on the REST API with a key. */
async function rest(server: TestServer, method: string, pathname: string, body?: unknown, apiKey = server.apiKey) {
  const res = await fetch(`${server.baseUrl}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

let references = 0;
async function createIntent(server: TestServer, apiKey = server.apiKey, extra: Record<string, unknown> = {}) {
  const res = await rest(server, "POST", "/v2/payment-intents", { amount: 50000, customerEmail: "ada@example.com", clientReference: `ts-${++references}`, ...extra }, apiKey);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string; checkoutLink: string; createdAt: string };
}

describe("startTestServer (payment-intents/testing)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it("serves on 127.0.0.1 and a free port, with baseUrl = url + BASE_PATH and a fresh merchant's key", async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(server.url, "http://127.0.0.1:0");
    assert.equal(server.baseUrl, `${server.url}/v1`);
    assert.match(server.merchantId, /^mer_/);
    assert.match(server.apiKey, /^sk_test_[A-Za-z0-9]{36}$/);
    assert.deepEqual((await rest(server, "GET", "/v2/payment-intents")).body, { paymentIntents: [] });
    // Checkout links point at the port the server got.
    const intent = await createIntent(server);
    assert.ok(intent.checkoutLink.startsWith(`${server.url}/checkout/`), intent.checkoutLink);
    assert.equal((await fetch(intent.checkoutLink)).status, 200);
  });

  it("pays, declines, expires and advances the clock through its helpers", async () => {
    const paid = await createIntent(server);
    const payment = await server.helpers.pay(paid.id, "succeeded");
    assert.equal(payment.paymentIntent.status, "successful");
    assert.equal(payment.attempt.paymentMethod, "card");
    assert.equal(payment.paymentIntent.transaction, payment.attempt.reference);
    assert.equal((await rest(server, "GET", `/v2/payment-intents/${paid.id}`)).body.status, "successful");

    const declined = await createIntent(server);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await server.helpers.pay(declined.id, "declined", "ussd")).paymentIntent.status);
    assert.deepEqual(statuses, ["pending", "pending", "failed"]);

    const expired = await createIntent(server);
    assert.equal((await server.helpers.expire(expired.id)).status, "expired");

    const held = await createIntent(server);
    const open = await server.helpers.pay(held.id, "processing");
    assert.equal(open.paymentIntent.status, "processing");
    const settled = await server.helpers.settle(open.attempt.id, "succeeded");
    assert.deepEqual([settled.attempt.outcome, settled.paymentIntent.status], ["succeeded", "successful"]);
    await assert.rejects(server.helpers.settle(open.attempt.id, "declined"), { name: "TestHelperError", status: 409 });

    const before = Date.now();
    const { now } = await server.helpers.advanceClock(3600);
    assert.ok(Date.parse(now) >= before + 3_600_000, now);
    assert.ok(Date.parse((await createIntent(server)).createdAt) >= Date.parse(now));
  });

  it("makes more merchants, and acts for one when given its key", async () => {
    const other = await server.helpers.createMerchant("Other Stores");
    assert.notEqual(other.merchantId, server.merchantId);
    const theirs = await createIntent(server, other.apiKey);
    await assert.rejects(server.helpers.pay(theirs.id, "succeeded"), (error: unknown) => {
      assert.ok(error instanceof TestHelperError);
      assert.equal(error.status, 404);
      assert.deepEqual(error.body, { status: 404, title: "Not Found", message: `payment intent ${theirs.id} not found` });
      assert.equal(error.message, `POST /v2/test-helpers/payment-intents/${theirs.id}/attempts answered 404 Not Found: payment intent ${theirs.id} not found`);
      return true;
    });
    assert.equal((await server.helpers.pay(theirs.id, "succeeded", undefined, { apiKey: other.apiKey })).paymentIntent.status, "successful");
  });

  it("throws the service's refusals as TestHelperError", async () => {
    const intent = await createIntent(server, server.apiKey, { paymentMethod: ["card"] });
    await assert.rejects(server.helpers.pay(intent.id, "succeeded", "ussd"), { name: "TestHelperError", status: 400 });
    await assert.rejects(server.helpers.advanceClock(0), { status: 400, body: { status: 400, title: "Bad Request", message: "seconds must be a whole number from 1 to 315360000 (ten years)" } });
    await assert.rejects(server.helpers.advanceClock(1.5), { status: 400, body: { status: 400, title: "Bad Request", message: "seconds must be an integer" } });
  });
});

describe("startTestServer options", () => {
  it("take any setting of the configuration table by name, strings, numbers or booleans", async () => {
    const server = await startTestServer({ BASE_PATH: "", MAX_PAYMENT_ATTEMPTS: 1, CHECKOUT_TTL: "1h", TEST_CLOCK: true });
    try {
      assert.equal(server.baseUrl, server.url);
      const intent = await createIntent(server);
      assert.equal((await server.helpers.pay(intent.id, "declined")).paymentIntent.status, "failed");
      const lapsing = await createIntent(server);
      await server.helpers.advanceClock(3600);
      assert.equal((await rest(server, "GET", `/v2/payment-intents/${lapsing.id}`)).body.status, "expired");
    } finally {
      await server.close();
    }
  });

  it("refuse unknown settings, bad values (as the environment's) and a server without helpers", async () => {
    await assert.rejects(startTestServer({ CHECKOUT_TLL: "1h" } as never), {
      name: "TypeError",
      message: "startTestServer: unknown setting CHECKOUT_TLL; the options are the variables of the configuration table, such as CHECKOUT_TTL",
    });
    await assert.rejects(startTestServer({ MAX_PAYMENT_ATTEMPTS: 0 }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.message, 'MAX_PAYMENT_ATTEMPTS="0" is not valid: an integer from 1 to 20');
      return true;
    });
    // TEST_CLOCK is startTestServer's own default: turning the helpers off names them, never a clock the caller did not set.
    await assert.rejects(startTestServer({ TEST_HELPERS: false }), {
      name: "TypeError",
      message: "startTestServer: the test server needs TEST_HELPERS; run `payment-intents serve` for a service without them",
    });
  });
});

describe("several test servers in one process", () => {
  it("are independent: own port, merchants, intents and clock", async () => {
    const [a, b] = await Promise.all([startTestServer(), startTestServer()]);
    try {
      assert.notEqual(a.url, b.url);
      assert.equal((await rest(b, "GET", "/v2/payment-intents", undefined, a.apiKey)).status, 401);
      await createIntent(a);
      assert.deepEqual((await rest(b, "GET", "/v2/payment-intents")).body, { paymentIntents: [] });
      const bBefore = Date.now();
      await a.helpers.advanceClock(86_400);
      const intentB = await createIntent(b);
      assert.ok(Date.parse(intentB.createdAt) < bBefore + 60_000, "b's clock did not move");
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("close() frees the port and may be called twice", async () => {
    const server = await startTestServer();
    await Promise.all([server.close(), server.close()]);
    await server.close();
    await assert.rejects(fetch(`${server.url}/healthz`));
  });
});
