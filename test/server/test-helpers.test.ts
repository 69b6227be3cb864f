import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { paymentIntentListItemKeys, timestampPattern } from "../support/rest-client.js";
import { startSandboxService, type SandboxService } from "../support/sandbox-service.js";

const merchantIdPattern = /^mer_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const testKeyPattern = /^sk_test_[A-Za-z0-9]{36}$/;
const attemptKeys = ["id", "paymentIntentId", "amount", "paymentMethod", "outcome", "reference", "declineReason", "createdAt"];

const badRequest = (message: string) => ({ status: 400, title: "Bad Request", message });

/** Creates a merchant through the helper and returns its key. */
async function newMerchant(service: SandboxService, name?: string): Promise<{ merchantId: string; apiKey: string }> {
  const res = await service.call("POST", "/v2/test-helpers/merchants", { json: name === undefined ? {} : { name } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

let references = 0;
/** Creates a pending intent for the key's merchant. */
async function newIntent(service: SandboxService, key: string, extra: Record<string, unknown> = {}) {
  const res = await service.call("POST", "/v2/payment-intents", {
    key,
    json: { amount: 50000, customerEmail: "ada@example.com", clientReference: `helpers-${++references}`, ...extra },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string; checkoutLink: string; status: string };
}

describe("test helpers over REST", () => {
  let service: SandboxService;
  before(async () => {
    service = await startSandboxService();
  });
  after(() => service.close());

  describe("POST /v2/test-helpers/merchants", () => {
    it("answers 201 with a fresh merchant and a working key, without a key of its own", async () => {
      const res = await service.call("POST", "/v2/test-helpers/merchants", { json: { name: "Ada Stores" } });
      assert.equal(res.status, 201);
      assert.deepEqual(Object.keys(res.body).sort(), ["apiKey", "merchantId"]);
      assert.match(res.body.merchantId, merchantIdPattern);
      assert.match(res.body.apiKey, testKeyPattern);
      // The key works on the API like a configured one.
      assert.equal((await service.call("GET", "/v2/settlement-accounts", { key: res.body.apiKey })).status, 200);
      const intent = await newIntent(service, res.body.apiKey);
      assert.equal((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key: res.body.apiKey })).status, 200);
    });

    it("makes isolated merchants: each sees only its own intents", async () => {
      const a = await newMerchant(service);
      const b = await newMerchant(service);
      assert.notEqual(a.merchantId, b.merchantId);
      const intent = await newIntent(service, a.apiKey);
      assert.equal((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key: b.apiKey })).status, 404);
      assert.deepEqual((await service.call("GET", "/v2/payment-intents", { key: b.apiKey })).body, { paymentIntents: [] });
      assert.equal((await service.call("GET", "/v2/payment-intents", { key: a.apiKey })).body.paymentIntents.length, 1);
    });

    it("shows the merchant's name on the checkout page; without a name, its id", async () => {
      const named = await newMerchant(service, "Ada & Sons Stores");
      const page = await (await fetch((await newIntent(service, named.apiKey)).checkoutLink)).text();
      assert.match(page, /Ada &amp; Sons Stores/);
      const unnamed = await newMerchant(service);
      const plain = await (await fetch((await newIntent(service, unnamed.apiKey)).checkoutLink)).text();
      assert.ok(plain.includes(unnamed.merchantId));
    });

    it("refuses a bad name with 400 naming the field, and creates nothing", async () => {
      for (const [json, message] of [
        [{ name: "" }, "name must be 1 to 100 characters of text"],
        [{ name: "x".repeat(101) }, "name must be 1 to 100 characters of text"],
        [{ name: "a\nb" }, "name must be 1 to 100 characters of text"],
        [{ name: 7 }, "name must be a string"],
        [{ nme: "Ada" }, "unknown field nme"],
      ] as const) {
        const res = await service.call("POST", "/v2/test-helpers/merchants", { json });
        assert.equal(res.status, 400, JSON.stringify(json));
        assert.deepEqual(res.body, badRequest(message));
      }
    });
  });

  describe("POST /v2/test-helpers/payment-intents/{id}/attempts", () => {
    let key: string;
    before(async () => {
      ({ apiKey: key } = await newMerchant(service));
    });

    it("pays with outcome succeeded: 201, the attempt and the intent in the GET shape, successful with transaction set", async () => {
      const intent = await newIntent(service, key, { paymentMethod: ["card", "ussd"] });
      const paidBefore = await transitionCount(service, "successful");
      const res = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, {
        key,
        json: { paymentMethod: "ussd", outcome: "succeeded" },
      });
      assert.equal(res.status, 201);
      assert.deepEqual(Object.keys(res.body).sort(), ["attempt", "paymentIntent"]);
      const { attempt, paymentIntent } = res.body;
      assert.deepEqual(Object.keys(attempt).sort(), [...attemptKeys].sort());
      assert.match(attempt.id, /^pa_/);
      assert.equal(attempt.paymentIntentId, intent.id);
      assert.equal(attempt.amount, "50000");
      assert.equal(attempt.paymentMethod, "ussd");
      assert.equal(attempt.outcome, "succeeded");
      assert.match(attempt.reference, /^txn_test_[0-9a-f]{24}$/);
      assert.equal(attempt.declineReason, null);
      assert.match(attempt.createdAt, timestampPattern);
      assert.deepEqual(Object.keys(paymentIntent).sort(), [...paymentIntentListItemKeys].sort());
      assert.equal(paymentIntent.status, "successful");
      assert.equal(paymentIntent.transaction, attempt.reference);
      // The intent changed when its attempt settled: at or after the attempt began.
      assert.ok(Date.parse(paymentIntent.updatedAt) >= Date.parse(attempt.createdAt));
      assert.deepEqual((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key })).body, paymentIntent);
      // The checkout's events fired (the metrics observe them).
      assert.equal(await transitionCount(service, "successful"), paidBefore + 1);
    });

    it("uses the intent's first method when paymentMethod is left out, card included", async () => {
      const intent = await newIntent(service, key, { paymentMethod: ["card", "bank_transfer"] });
      const res = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { key, json: { outcome: "succeeded" } });
      assert.equal(res.status, 201);
      assert.equal(res.body.attempt.paymentMethod, "card");
      assert.equal(res.body.paymentIntent.status, "successful");
    });

    it("declines: the intent stays pending until MAX_PAYMENT_ATTEMPTS declines, then fails; the next attempt is 409", async () => {
      const intent = await newIntent(service, key);
      const failedBefore = await transitionCount(service, "failed");
      const attempt = (outcome: string, paymentMethod = "bank_transfer") =>
        service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { key, json: { paymentMethod, outcome } });
      for (const [n, method] of [[1, "bank_transfer"], [2, "card"]] as const) {
        const res = await attempt("declined", method);
        assert.equal(res.status, 201, `decline ${n}`);
        assert.equal(res.body.attempt.outcome, "declined");
        assert.equal(res.body.attempt.paymentMethod, method);
        assert.equal(typeof res.body.attempt.declineReason, "string");
        assert.equal(res.body.paymentIntent.status, "pending");
        assert.equal(res.body.paymentIntent.transaction, null);
        // Recorded where the hosted checkout counts attempts.
        const left = 3 - n;
        assert.match(await (await fetch(intent.checkoutLink)).text(), new RegExp(`${left} ${left === 1 ? "attempt" : "attempts"} left`));
      }
      const third = await attempt("declined");
      assert.equal(third.status, 201);
      assert.equal(third.body.paymentIntent.status, "failed");
      assert.equal(await transitionCount(service, "failed"), failedBefore + 1);
      const refused = await attempt("succeeded");
      assert.equal(refused.status, 409);
      assert.deepEqual(refused.body, { status: 409, title: "Conflict", message: `payment intent ${intent.id} is failed and can no longer be paid` });
      assert.equal((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key })).body.status, "failed");
    });

    it("allows one successful attempt: paying a successful intent again is 409 and changes nothing", async () => {
      const intent = await newIntent(service, key);
      const first = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { key, json: { outcome: "succeeded" } });
      const again = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { key, json: { outcome: "succeeded" } });
      assert.equal(again.status, 409);
      assert.equal(again.body.message, `payment intent ${intent.id} is successful and can no longer be paid`);
      assert.deepEqual((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key })).body, first.body.paymentIntent);
    });

    it("gives exactly one success to concurrent helper attempts on one intent", async () => {
      const intent = await newIntent(service, key);
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { key, json: { outcome: "succeeded" } }),
        ),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [201, 409, 409, 409, 409]);
    });

    it("answers 404 for an unknown id, another merchant's intent and a deleted one", async () => {
      const other = await newMerchant(service);
      const theirs = await newIntent(service, other.apiKey);
      const deleted = await newIntent(service, key);
      assert.equal((await service.call("DELETE", `/v2/payment-intents/${deleted.id}`, { key })).status, 200);
      for (const id of ["pi_unknown", theirs.id, deleted.id]) {
        const res = await service.call("POST", `/v2/test-helpers/payment-intents/${id}/attempts`, { key, json: { outcome: "succeeded" } });
        assert.equal(res.status, 404, id);
        assert.deepEqual(res.body, { status: 404, title: "Not Found", message: `payment intent ${id} not found` });
      }
      assert.equal((await service.call("GET", `/v2/payment-intents/${theirs.id}`, { key: other.apiKey })).body.status, "pending");
    });

    it("refuses a method the intent does not allow, and a bad outcome, with 400 naming the field", async () => {
      const intent = await newIntent(service, key, { paymentMethod: ["card"] });
      const path = `/v2/test-helpers/payment-intents/${intent.id}/attempts`;
      for (const [json, message] of [
        [{ paymentMethod: "ussd", outcome: "succeeded" }, `paymentMethod ussd is not allowed for payment intent ${intent.id}: it allows card`],
        [{ paymentMethod: "cash", outcome: "succeeded" }, `paymentMethod cash is not allowed for payment intent ${intent.id}: it allows card`],
        [{ outcome: "maybe" }, "outcome must be one of succeeded, declined, processing"],
        [{}, "outcome must be one of succeeded, declined, processing"],
        [{ outcome: 1 }, "outcome must be a string"],
        [{ outcome: "succeeded", amount: 5 }, "unknown field amount"],
      ] as const) {
        const res = await service.call("POST", path, { key, json });
        assert.equal(res.status, 400, JSON.stringify(json));
        assert.deepEqual(res.body, badRequest(message));
      }
      assert.equal((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key })).body.status, "pending");
    });

    it("needs the merchant's key", async () => {
      const intent = await newIntent(service, key);
      const res = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { json: { outcome: "succeeded" } });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get("www-authenticate"), "Bearer");
    });
  });

  describe("POST /v2/test-helpers/payment-attempts/{id}/settle", () => {
    let key: string;
    before(async () => {
      ({ apiKey: key } = await newMerchant(service));
    });
    /** An intent whose helper attempt the processor still has: processing. */
    async function processing(method = "card") {
      const intent = await newIntent(service, key, { paymentMethod: [method] });
      const res = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { key, json: { outcome: "processing" } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.attempt.outcome, "processing");
      assert.equal(res.body.paymentIntent.status, "processing");
      return { intent, attempt: res.body.attempt as { id: string; reference: string } };
    }
    const settle = (id: string, json: unknown, as = key) => service.call("POST", `/v2/test-helpers/payment-attempts/${id}/settle`, { key: as, json });

    it("settles a processing attempt as succeeded later: 200, the attempt and the intent successful with its reference, once", async () => {
      const { intent, attempt } = await processing("bank_transfer");
      const paidBefore = await transitionCount(service, "successful");
      const res = await settle(attempt.id, { outcome: "succeeded" });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body).sort(), ["attempt", "paymentIntent"]);
      assert.deepEqual(Object.keys(res.body.attempt).sort(), [...attemptKeys].sort());
      assert.equal(res.body.attempt.id, attempt.id);
      assert.equal(res.body.attempt.outcome, "succeeded");
      assert.equal(res.body.attempt.reference, attempt.reference);
      assert.equal(res.body.paymentIntent.status, "successful");
      assert.equal(res.body.paymentIntent.transaction, attempt.reference);
      assert.deepEqual((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key })).body, res.body.paymentIntent);
      assert.equal(await transitionCount(service, "successful"), paidBefore + 1);
      // Settled once: a second settle, either way, is 409 and changes nothing.
      for (const outcome of ["succeeded", "declined"]) {
        const again = await settle(attempt.id, { outcome });
        assert.equal(again.status, 409);
        assert.deepEqual(again.body, {
          status: 409,
          title: "Conflict",
          message: `payment attempt ${attempt.id} is succeeded: only a processing or requires_action attempt can be settled`,
        });
      }
      assert.deepEqual((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key })).body, res.body.paymentIntent);
    });

    it("settles one as declined: the intent is pending again and can be paid", async () => {
      const { intent, attempt } = await processing();
      const res = await settle(attempt.id, { outcome: "declined" });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.attempt.outcome, "declined");
      assert.equal(res.body.attempt.declineReason, "Declined by a test helper.");
      assert.equal(res.body.paymentIntent.status, "pending");
      const again = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { key, json: { outcome: "succeeded" } });
      assert.equal(again.status, 201);
      assert.equal(again.body.paymentIntent.status, "successful");
    });

    it("answers 404 for an unknown attempt and another merchant's, 400 for a bad outcome, 401 without a key; nothing changes", async () => {
      const { intent, attempt } = await processing();
      const { apiKey: other } = await newMerchant(service);
      for (const [id, as] of [["pa_nope", key], [attempt.id, other]] as const) {
        const res = await settle(id, { outcome: "succeeded" }, as);
        assert.equal(res.status, 404);
        assert.deepEqual(res.body, { status: 404, title: "Not Found", message: `payment attempt ${id} not found` });
      }
      for (const outcome of ["", "processing", "SUCCEEDED"]) {
        const res = await settle(attempt.id, { outcome });
        assert.equal(res.status, 400);
        assert.deepEqual(res.body, badRequest("outcome must be succeeded or declined"));
      }
      const anonymous = await service.call("POST", `/v2/test-helpers/payment-attempts/${attempt.id}/settle`, { json: { outcome: "succeeded" } });
      assert.equal(anonymous.status, 401);
      assert.equal((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key })).body.status, "processing");
    });
  });

  describe("POST /v2/test-helpers/payment-intents/{id}/expire", () => {
    let key: string;
    before(async () => {
      ({ apiKey: key } = await newMerchant(service));
    });

    it("expires a pending intent: 200 with the GET shape, listed as expired, no longer payable", async () => {
      const intent = await newIntent(service, key);
      const expiredBefore = await transitionCount(service, "expired");
      const res = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/expire`, { key });
      assert.equal(res.status, 200);
      assert.equal(await transitionCount(service, "expired"), expiredBefore + 1);
      assert.deepEqual(Object.keys(res.body).sort(), [...paymentIntentListItemKeys].sort());
      assert.equal(res.body.status, "expired");
      assert.deepEqual((await service.call("GET", `/v2/payment-intents/${intent.id}`, { key })).body, res.body);
      const listed = await service.call("GET", "/v2/payment-intents?status=expired", { key });
      assert.deepEqual(listed.body.paymentIntents.map((i: { id: string }) => i.id), [intent.id]);
      const pay = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/attempts`, { key, json: { outcome: "succeeded" } });
      assert.equal(pay.status, 409);
      assert.equal(pay.body.message, `payment intent ${intent.id} is expired and can no longer be paid`);
    });

    it("answers 409 for an intent that is not pending, 404 for one it cannot see", async () => {
      const paid = await newIntent(service, key);
      await service.call("POST", `/v2/test-helpers/payment-intents/${paid.id}/attempts`, { key, json: { outcome: "succeeded" } });
      const expired = await newIntent(service, key);
      await service.call("POST", `/v2/test-helpers/payment-intents/${expired.id}/expire`, { key });
      for (const [intent, status] of [[paid, "successful"], [expired, "expired"]] as const) {
        const res = await service.call("POST", `/v2/test-helpers/payment-intents/${intent.id}/expire`, { key });
        assert.equal(res.status, 409);
        assert.deepEqual(res.body, { status: 409, title: "Conflict", message: `payment intent ${intent.id} is ${status} and can no longer be expired` });
      }
      const other = await newMerchant(service);
      const theirs = await newIntent(service, other.apiKey);
      assert.equal((await service.call("POST", `/v2/test-helpers/payment-intents/${theirs.id}/expire`, { key })).status, 404);
      assert.equal((await service.call("GET", `/v2/payment-intents/${theirs.id}`, { key: other.apiKey })).body.status, "pending");
    });
  });

  describe("without TEST_CLOCK", () => {
    it("has no clock helpers: 404 like any unknown path", async () => {
      const { apiKey } = await newMerchant(service);
      for (const [method, path] of [["GET", "/v2/test-helpers/clock"], ["POST", "/v2/test-helpers/clock/advance"]] as const) {
        const res = await service.call(method, path, { key: apiKey, json: method === "POST" ? { seconds: 60 } : undefined });
        assert.equal(res.status, 404, path);
        assert.deepEqual(res.body, { status: 404, title: "Not Found", message: `no route for /v1${path}` });
      }
    });
  });

  it("says so in /readyz detail and in the start-up log", async () => {
    const res = await fetch(`${service.url}/readyz`);
    const { detail, ...verdict } = (await res.json()) as { detail: Record<string, unknown> };
    assert.deepEqual(verdict, { status: 200, title: "OK", message: "ready" });
    assert.deepEqual([detail.testHelpers, detail.testClock, detail.state], [true, false, "ready"]);
    const line = service.logs.find((l) => l.fields.testHelpers === true);
    assert.ok(line, "a start-up line about the helpers");
    assert.equal(line.level, "info");
    assert.match(line.message, /^test helpers are on \(\/v1\/v2\/test-helpers\/…\)/);
  });
});

describe("the test clock (TEST_CLOCK=true)", () => {
  let service: SandboxService;
  let key: string;
  before(async () => {
    service = await startSandboxService({ TEST_CLOCK: "true", CHECKOUT_TTL: "1h" });
    ({ apiKey: key } = await newMerchant(service));
  });
  after(() => service.close());

  const now = async () => {
    const res = await service.call("GET", "/v2/test-helpers/clock", { key });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ["now"]);
    assert.match(res.body.now, timestampPattern);
    return Date.parse(res.body.now);
  };

  it("starts at the real time and moves with it", async () => {
    const before = Date.now();
    const first = await now();
    assert.ok(Math.abs(first - before) < 60_000, `${new Date(first).toISOString()} is not about ${new Date(before).toISOString()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok((await now()) >= first + 15);
  });

  it("advances by whole seconds: 200 with the new time, and createdAt follows it", async () => {
    const start = await now();
    const res = await service.call("POST", "/v2/test-helpers/clock/advance", { key, json: { seconds: 86_400 } });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ["now"]);
    const advanced = Date.parse(res.body.now);
    assert.ok(advanced >= start + 86_400_000 && advanced < start + 86_400_000 + 60_000, res.body.now);
    const intent = await service.call("POST", "/v2/payment-intents", {
      key,
      json: { amount: 100, customerEmail: "ada@example.com", clientReference: "after-advance" },
    });
    assert.ok(Date.parse(intent.body.createdAt) >= advanced);
    assert.equal(intent.body.createdAt, intent.body.updatedAt);
    // Out of the way of the next test, which counts expiries.
    assert.equal((await service.call("DELETE", `/v2/payment-intents/${intent.body.id}`, { key })).status, 200);
  });

  it("expires a lapsed intent within a second of the advance, through the sweep, without a read", async () => {
    const expiredBefore = await transitionCount(service, "expired");
    const intent = await newIntent(service, key);
    const res = await service.call("POST", "/v2/test-helpers/clock/advance", { key, json: { seconds: 3600 } });
    assert.equal(res.status, 200);
    // The sweep (not a read) moves the metric. It runs once a minute, and at
    // once after an advance: well within a second, waited for generously on this shared machine.
    const deadline = Date.now() + 5000;
    while ((await transitionCount(service, "expired")) === expiredBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    assert.equal(await transitionCount(service, "expired"), expiredBefore + 1);
    const read = await service.call("GET", `/v2/payment-intents/${intent.id}`, { key });
    assert.equal(read.body.status, "expired");
  });

  it("refuses negative, zero, fractional, non-numeric, missing and too large seconds with 400 naming the field", async () => {
    const start = await now();
    for (const [json, message] of [
      [{ seconds: -5 }, "seconds must be a whole number from 1 to 315360000 (ten years)"],
      [{ seconds: 0 }, "seconds must be a whole number from 1 to 315360000 (ten years)"],
      [{}, "seconds must be a whole number from 1 to 315360000 (ten years)"],
      [{ seconds: 315_360_001 }, "seconds must be a whole number from 1 to 315360000 (ten years)"],
      [{ seconds: 1.5 }, "seconds must be an integer"],
      [{ seconds: "60" }, "seconds must be an integer, but a string was sent: write the number without quotes"],
      [{ seconds: 60, minutes: 1 }, "unknown field minutes"],
    ] as const) {
      const res = await service.call("POST", "/v2/test-helpers/clock/advance", { key, json });
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.deepEqual(res.body, badRequest(message));
    }
    assert.ok((await now()) < start + 60_000, "the clock did not move");
  });

  it("needs a key", async () => {
    assert.equal((await service.call("GET", "/v2/test-helpers/clock")).status, 401);
    assert.equal((await service.call("POST", "/v2/test-helpers/clock/advance", { json: { seconds: 1 } })).status, 401);
  });

  it("shows in /readyz detail", async () => {
    const body = (await (await fetch(`${service.url}/readyz`)).json()) as { detail: Record<string, unknown> };
    assert.deepEqual([body.detail.testHelpers, body.detail.testClock], [true, true]);
  });
});

describe("with TEST_HELPERS=false", () => {
  let service: SandboxService;
  before(async () => {
    service = await startSandboxService({ TEST_HELPERS: "false", API_KEYS: "acme:sk_test_acme_0123456789abcdef" });
  });
  after(() => service.close());

  it("serves no helper: every route is 404, with or without a key", async () => {
    for (const [method, path, json] of [
      ["POST", "/v2/test-helpers/merchants", {}],
      ["POST", "/v2/test-helpers/payment-intents/pi_x/attempts", { outcome: "succeeded" }],
      ["POST", "/v2/test-helpers/payment-intents/pi_x/expire", undefined],
      ["POST", "/v2/test-helpers/payment-attempts/pa_x/settle", { outcome: "succeeded" }],
      ["GET", "/v2/test-helpers/clock", undefined],
    ] as const) {
      for (const key of [undefined, "sk_test_acme_0123456789abcdef"]) {
        const res = await service.call(method, path, { key, json });
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.deepEqual(res.body, { status: 404, title: "Not Found", message: `no route for /v1${path}` });
      }
    }
  });

  it("says so in /readyz detail and logs nothing about helpers", async () => {
    const { detail, ...verdict } = (await (await fetch(`${service.url}/readyz`)).json()) as { detail: Record<string, unknown> };
    assert.deepEqual(verdict, { status: 200, title: "OK", message: "ready" });
    assert.deepEqual([detail.testHelpers, detail.testClock], [false, false]);
    assert.equal(service.logs.some((l) => "testHelpers" in l.fields), false);
  });
});

/** payments_intent_transitions_total{from="pending",to}: moved by the service's events, after a transition is stored. */
async function transitionCount(service: SandboxService, to: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  // A payment settles from processing, where its attempt held the intent; expiry comes from pending.
  const from = to === "expired" ? "pending" : "processing";
  const match = new RegExp(`^payments_intent_transitions_total\\{from="${from}",to="${to}"\\} (\\d+)$`, "m").exec(text);
  return match ? Number(match[1]) : 0;
}
