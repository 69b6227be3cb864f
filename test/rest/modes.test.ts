import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getPage } from "../checkout/support/checkout-client.js";
import { createRestClient, expectError, expectJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** A live Paystack secret key: what makes live payment intents possible. */
const livePaystackKey = "sk_live_7e57000000000000000000000000000000000001";
const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
const account = { accountName: "Ada", accountNumber: "0123456789", bankName: "GTBank", bankCode: "058" };

interface Json {
  id: string;
  livemode: boolean;
  [key: string]: unknown;
}

describe("test and live modes (issue 23, §1)", () => {
  let server: TestServer;
  let client: RestClient;
  const as = (key: string) => `Bearer ${key}`;
  let test: string;
  let live: string;
  before(async () => {
    server = await startTestServer({ settings: { PAYSTACK_SECRET_KEY: livePaystackKey } });
    client = createRestClient(server);
    test = as(server.keys["merchantA"]!);
    live = as(server.liveKeys["merchantA"]!);
  });
  after(() => server.close());

  const create = (authorization: string, clientReference: string, extra: object = {}) =>
    client.request("POST", "/v2/payment-intents", { authorization, json: { amount: 50000, customerEmail: "ada@example.com", clientReference, ...extra } });

  it("stamps every intent with its key's mode, in its id and its livemode", async () => {
    const t = expectJson<Json>(await create(test, "mode-stamp"), 201);
    const l = expectJson<Json>(await create(live, "mode-stamp-live"), 201);
    assert.match(t.id, new RegExp(`^pi_test_${uuid}$`));
    assert.equal(t.livemode, false);
    assert.match(l.id, new RegExp(`^pi_live_${uuid}$`));
    assert.equal(l.livemode, true);
    assert.equal(expectJson<Json>(await client.request("GET", `/v2/payment-intents/${l.id}`, { authorization: live }), 200).livemode, true);
  });

  it("offers a live intent only what a live processor collects: those by default, a 400 naming a test-only method given", async () => {
    const types = (intent: Json) => (intent["paymentMethods"] as { type: string }[]).map((m) => m.type);
    // Card, bank transfer and USSD have only the test-mode processor here; Paystack has a live key.
    assert.deepEqual(types(expectJson<Json>(await create(live, "mode-methods-default"), 201)), ["paystack"]);
    assert.deepEqual(types(expectJson<Json>(await create(test, "mode-methods-default"), 201)), ["card", "bank_transfer", "ussd", "paystack"]);
    const given = await create(live, "mode-methods-card", { paymentMethod: ["card", "paystack"] });
    assert.deepEqual(expectJson(given, 400), {
      status: 400,
      title: "Bad Request",
      message: "a live payment intent needs a live payment processor: paymentMethod card is collected only in test mode here; live mode offers paystack",
    });
    // Another merchant's, so the accounts test below sees only its own.
    const liveB = as(server.liveKeys["merchantB"]!);
    const accountB = expectJson<Json>(await client.request("POST", "/v2/settlement-accounts", { authorization: liveB, json: account }), 201);
    const split = await create(liveB, "mode-methods-split", { settlementAccounts: [{ settlementAccountId: accountB.id, splitAmount: 100 }] });
    expectError(split, 400, /^a live payment intent needs a live payment processor: none of live mode's methods \(paystack\) takes settlement splits$/);
    // Nothing was created by the refusals.
    for (const [reference, authorization] of [["mode-methods-card", live], ["mode-methods-split", liveB]] as const) {
      const listed = expectJson<{ paymentIntents: Json[] }>(await client.request("GET", `/v2/payment-intents?clientReference=${reference}`, { authorization }), 200);
      assert.deepEqual(listed.paymentIntents, []);
    }
  });

  it("answers 404 saying where an intent of the other mode is, for reads and deletes both ways", async () => {
    const t = expectJson<Json>(await create(test, "mode-404"), 201);
    const l = expectJson<Json>(await create(live, "mode-404"), 201);
    for (const method of ["GET", "DELETE"]) {
      const fromTest = await client.request(method, `/v2/payment-intents/${l.id}`, { authorization: test });
      assert.deepEqual(expectJson(fromTest, 404), {
        status: 404,
        title: "Not Found",
        message: `payment intent ${l.id} not found: it exists in live mode, but a test mode key was used`,
      });
      const fromLive = await client.request(method, `/v2/payment-intents/${t.id}`, { authorization: live });
      expectError(fromLive, 404, new RegExp(`^payment intent ${t.id} not found: it exists in test mode, but a live mode key was used$`));
    }
    // Another merchant's intent stays a plain 404, in either mode.
    const other = await client.request("GET", `/v2/payment-intents/${l.id}`, { authorization: as(server.liveKeys["merchantB"]!) });
    expectError(other, 404, new RegExp(`^payment intent ${l.id} not found$`));
    // Nothing changed: both are still pending.
    assert.equal(expectJson<Json>(await client.request("GET", `/v2/payment-intents/${l.id}`, { authorization: live }), 200)["status"], "pending");
  });

  it("lists only the key's mode, and a clientReference is the mode's own", async () => {
    const t = expectJson<Json>(await create(test, "mode-list"), 201);
    const l = expectJson<Json>(await create(live, "mode-list"), 201);
    assert.notEqual(t.id, l.id);
    const testList = expectJson<{ paymentIntents: Json[] }>(await client.request("GET", "/v2/payment-intents?pageSize=100", { authorization: test }), 200);
    const liveList = expectJson<{ paymentIntents: Json[] }>(await client.request("GET", "/v2/payment-intents?pageSize=100", { authorization: live }), 200);
    assert.ok(testList.paymentIntents.length > 0 && liveList.paymentIntents.length > 0);
    assert.ok(testList.paymentIntents.every((i) => i.livemode === false && i.id.startsWith("pi_test_")));
    assert.ok(liveList.paymentIntents.every((i) => i.livemode === true && i.id.startsWith("pi_live_")));
    const byReference = expectJson<{ paymentIntents: Json[] }>(
      await client.request("GET", "/v2/payment-intents?clientReference=mode-list", { authorization: live }),
      200,
    );
    assert.deepEqual(byReference.paymentIntents.map((i) => i.id), [l.id]);
    // A replay in one mode replays that mode's intent.
    const replay = await create(test, "mode-list");
    assert.equal(expectJson<Json>(replay, 200).id, t.id);
  });

  it("refuses a page token of the other mode", async () => {
    for (let i = 0; i < 2; i++) expectJson(await create(live, `mode-page-${i}`), 201);
    const first = expectJson<{ nextPageToken?: string }>(await client.request("GET", "/v2/payment-intents?pageSize=1", { authorization: live }), 200);
    assert.ok(first.nextPageToken);
    const crossed = await client.request("GET", `/v2/payment-intents?pageSize=1&pageToken=${first.nextPageToken}`, { authorization: test });
    expectError(crossed, 400, /pageToken is not valid/);
  });

  it("keeps settlement accounts apart: each mode registers and lists its own, and splits only to its own", async () => {
    const t = expectJson<Json>(await client.request("POST", "/v2/settlement-accounts", { authorization: test, json: account }), 201);
    // The same bank account in the other mode is that mode's own registration.
    const l = expectJson<Json>(await client.request("POST", "/v2/settlement-accounts", { authorization: live, json: account }), 201);
    assert.match(t.id, /^sa_test_/);
    assert.match(l.id, /^sa_live_/);
    assert.deepEqual([t.livemode, l.livemode], [false, true]);
    const testList = expectJson<{ settlementAccounts: Json[] }>(await client.request("GET", "/v2/settlement-accounts", { authorization: test }), 200);
    assert.deepEqual(testList.settlementAccounts.map((a) => a.id), [t.id]);
    const split = await create(test, "mode-split", { settlementAccounts: [{ settlementAccountId: l.id, splitAmount: 100 }] });
    expectError(split, 400, /is a live mode account; a test mode intent splits to test mode accounts/);
    // A list item shows the earliest account of its own mode.
    const item = expectJson<{ settlementAccount: Json | null }>(
      await client.request("GET", `/v2/payment-intents/${expectJson<Json>(await create(live, "mode-account"), 201).id}`, { authorization: live }),
      200,
    );
    assert.equal(item.settlementAccount?.id, l.id);
  });

  it("delivers each mode's events to that mode's endpoints only, and lists and reads events per mode", async () => {
    const testEndpoint = expectJson<Json>(
      await client.request("POST", "/v2/webhook-endpoints", { authorization: test, json: { url: "https://hooks.example.com/test" } }),
      201,
    );
    const liveEndpoint = expectJson<Json>(
      await client.request("POST", "/v2/webhook-endpoints", { authorization: live, json: { url: "https://hooks.example.com/live" } }),
      201,
    );
    assert.match(testEndpoint.id, /^we_test_/);
    assert.match(liveEndpoint.id, /^we_live_/);
    assert.deepEqual([testEndpoint.livemode, liveEndpoint.livemode], [false, true]);
    const listed = expectJson<{ webhookEndpoints: Json[] }>(await client.request("GET", "/v2/webhook-endpoints", { authorization: live }), 200);
    assert.deepEqual(listed.webhookEndpoints.map((e) => e.id), [liveEndpoint.id]);
    expectError(
      await client.request("DELETE", `/v2/webhook-endpoints/${liveEndpoint.id}`, { authorization: test }),
      404,
      /exists in live mode, but a test mode key was used/,
    );

    const t = expectJson<Json>(await create(test, "mode-events"), 201);
    const l = expectJson<Json>(await create(live, "mode-events"), 201);
    const deliveries = async (authorization: string, id: string) =>
      expectJson<{ deliveries: { eventId: string }[] }>(await client.request("GET", `/v2/webhook-endpoints/${id}/deliveries`, { authorization }), 200).deliveries;
    const liveEvents = expectJson<{ events: Json[] }>(await client.request("GET", "/v2/events?pageSize=100", { authorization: live }), 200).events;
    const testEvents = expectJson<{ events: Json[] }>(await client.request("GET", "/v2/events?pageSize=100", { authorization: test }), 200).events;
    assert.ok(liveEvents.every((e) => e.livemode === true && e.id.startsWith("evt_live_")));
    assert.ok(testEvents.every((e) => e.livemode === false && e.id.startsWith("evt_test_")));
    const liveCreated = liveEvents.find((e) => (e["data"] as Json).id === l.id)!;
    const testCreated = testEvents.find((e) => (e["data"] as Json).id === t.id)!;
    assert.ok(liveCreated && testCreated);
    assert.deepEqual((await deliveries(live, liveEndpoint.id)).map((d) => d.eventId), [liveCreated.id]);
    assert.deepEqual((await deliveries(test, testEndpoint.id)).map((d) => d.eventId), [testCreated.id]);
    expectError(await client.request("GET", `/v2/events/${liveCreated.id}`, { authorization: test }), 404, /exists in live mode/);
    // Redelivering names an endpoint: one of the other mode is refused.
    expectError(
      await client.request("POST", `/v2/events/${testCreated.id}/redeliver`, { authorization: test, json: { webhookEndpointId: liveEndpoint.id } }),
      404,
      /exists in live mode/,
    );
  });

  it("shows the checkout page's test banner for test-mode intents only", async () => {
    const t = expectJson<{ checkoutLink: string }>(await create(test, "mode-page"), 201);
    const l = expectJson<{ checkoutLink: string }>(await create(live, "mode-page"), 201);
    const testPage = await getPage(t.checkoutLink);
    const livePage = await getPage(l.checkoutLink);
    assert.equal(testPage.status, 200);
    assert.equal(livePage.status, 200);
    assert.match(testPage.html, /Test mode/);
    assert.doesNotMatch(livePage.html, /Test mode/);
  });

  it("offers on a live intent's page only the methods of a live processor: card (the test-mode processor's) is not there, Paystack (live) is", async () => {
    const l = expectJson<{ checkoutLink: string }>(await create(live, "mode-page-methods"), 201);
    const t = expectJson<{ checkoutLink: string }>(await create(test, "mode-page-methods", { paymentMethod: ["card", "paystack"] }), 201);
    const livePage = await getPage(l.checkoutLink);
    const testPage = await getPage(t.checkoutLink);
    assert.equal(livePage.status, 200);
    assert.doesNotMatch(livePage.html, /id="method-card"/);
    assert.match(livePage.html, /id="method-paystack"/);
    assert.match(testPage.html, /id="method-card"/);
    assert.match(testPage.html, /id="method-paystack"/);
  });

  it("refuses a mistyped key of the current format with 401, before any lookup", async () => {
    const key = server.liveKeys["merchantA"]!;
    const typo = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
    expectError(await client.request("GET", "/v2/payment-intents", { authorization: as(typo) }), 401, /checksum does not match/);
  });
});

describe("live mode without a live processor", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    // The default test server's Paystack key is a test key.
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  it("answers 400 naming the missing setting, and creates nothing", async () => {
    const authorization = `Bearer ${server.liveKeys["merchantA"]}`;
    const res = await client.request("POST", "/v2/payment-intents", { authorization, json: { amount: 50000, customerEmail: "ada@example.com", clientReference: "live-1" } });
    expectError(res, 400, /a live payment intent needs a live payment processor: set PAYSTACK_SECRET_KEY to a live secret key \(sk_live_…\)/);
    assert.deepEqual(expectJson(await client.request("GET", "/v2/payment-intents", { authorization }), 200), { paymentIntents: [] });
    // Test mode is unaffected.
    expectJson(await client.createIntent({ amount: 50000, customerEmail: "ada@example.com", clientReference: "test-1" }), 201);
  });
});

describe("the test helpers act on test mode only", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer({ settings: { PAYSTACK_SECRET_KEY: livePaystackKey, TEST_HELPERS: "true" } });
    client = createRestClient(server);
  });
  after(() => server.close());

  it("refuses SettlePaymentAttempt with a live key, and answers a test key's attempt of a live intent with the other mode's 404; nothing changes", async () => {
    const live = `Bearer ${server.liveKeys["merchantA"]}`;
    const test = `Bearer ${server.keys["merchantA"]}`;
    const intent = expectJson<Json>(
      await client.request("POST", "/v2/payment-intents", {
        authorization: live,
        json: { amount: 50000, customerEmail: "ada@example.com", clientReference: "live-settle", paymentMethod: ["paystack"] },
      }),
      201,
    );
    // An open attempt of the live intent, as the checkout leaves one while Paystack has not answered.
    const now = new Date();
    const attemptId = "pa_live_settle";
    const begun = await server.intents.beginAttempt(
      {
        id: attemptId,
        paymentIntentId: intent.id,
        merchantId: "merchantA",
        amount: 50000n,
        method: "paystack",
        outcome: "processing",
        processor: "paystack",
        idempotencyKey: attemptId,
        processorReference: null,
        nextActionUrl: null,
        declineReason: null,
        lateSuccess: null,
        createdAt: now,
        settledAt: null,
      },
      new Date(now.getTime() + 60_000),
    );
    assert.equal(begun?.begun, true);
    const settle = (authorization: string) =>
      client.request("POST", `/v2/test-helpers/payment-attempts/${attemptId}/settle`, { authorization, json: { outcome: "succeeded" } });
    assert.deepEqual(expectJson(await settle(live), 409), {
      status: 409,
      title: "Conflict",
      message: "the test helpers act on test mode only: call them with a test key (sk_test_…)",
    });
    assert.deepEqual(expectJson(await settle(test), 404), {
      status: 404,
      title: "Not Found",
      message: `payment attempt ${attemptId} not found: it exists in live mode, but a test mode key was used`,
    });
    assert.equal(expectJson<Json>(await client.request("GET", `/v2/payment-intents/${intent.id}`, { authorization: live }), 200)["status"], "processing");
    assert.equal((await server.intents.findAttempt("merchantA", attemptId))?.outcome, "processing");
  });
});
