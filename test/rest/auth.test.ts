import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createRestClient,
  expectError,
  expectJson,
  type PaymentIntentListJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const validIntent = { amount: 50000, customerEmail: "ada@example.com", clientReference: "auth-1" };
const validAccount = { accountName: "Ada", accountNumber: "0123456789", bankName: "GTBank", bankCode: "058" };

/** One request per REST route, each one that would succeed with a valid key. */
const routes: { method: string; path: string; json?: unknown }[] = [
  { method: "POST", path: "/v2/payment-intents", json: validIntent },
  { method: "GET", path: "/v2/payment-intents" },
  { method: "GET", path: "/v2/payment-intents/pi_00000000-0000-7000-8000-000000000000" },
  { method: "DELETE", path: "/v2/payment-intents/pi_00000000-0000-7000-8000-000000000000" },
  { method: "POST", path: "/v2/settlement-accounts", json: validAccount },
  { method: "GET", path: "/v2/settlement-accounts" },
];

describe("REST authentication", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  const badHeaders: { name: string; authorization: (server: TestServer) => string | null; message: RegExp }[] = [
    { name: "no Authorization header", authorization: () => null, message: /Authorization/ },
    { name: "Basic credentials", authorization: () => "Basic xyz", message: /Bearer/ },
    { name: "the key without a scheme", authorization: (s) => s.keys["merchantA"]!, message: /Bearer/ },
    { name: "Bearer with no key", authorization: () => "Bearer", message: /API key/ },
    // fetch trims the trailing space, as any proxy may: the server sees "Bearer".
    { name: "Bearer with an empty key", authorization: () => "Bearer ", message: /API key/ },
    { name: "an unknown key", authorization: () => "Bearer sk_test_unknown_key_000000000000", message: /API key/ },
    { name: "a key with one character changed", authorization: (s) => `Bearer ${s.keys["merchantA"]!.slice(0, -1)}#`, message: /API key/ },
    { name: "a key with a suffix", authorization: (s) => `Bearer ${s.keys["merchantA"]!}x`, message: /API key/ },
    { name: "a very long key", authorization: () => `Bearer ${"k".repeat(4000)}`, message: /API key/ },
  ];
  for (const { name, authorization, message } of badHeaders) {
    for (const route of routes) {
      it(`answers 401 with WWW-Authenticate for ${name} on ${route.method} ${route.path}`, async () => {
        const res = await client.request(route.method, route.path, { authorization: authorization(server), json: route.json });
        expectError(res, 401, message);
        assert.equal(res.headers.get("www-authenticate"), "Bearer");
      });
    }
  }

  it("never echoes the presented key", async () => {
    const key = "sk_test_secret_value_that_must_not_leak";
    const res = await client.request("GET", "/v2/payment-intents", { authorization: `Bearer ${key}` });
    expectError(res, 401, /API key/);
    assert.ok(!res.text.includes(key));
  });

  it("changes nothing when the key is refused", async () => {
    expectError(
      await client.request("POST", "/v2/payment-intents", { authorization: "Bearer nope", json: validIntent }),
      401,
      /API key/,
    );
    assert.deepEqual(expectJson<PaymentIntentListJson>(await client.listIntents(), 200), { paymentIntents: [] });
  });

  it("accepts the scheme in any case (RFC 9110 §11.1)", async () => {
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      const res = await client.request("GET", "/v2/payment-intents", { authorization: `${scheme} ${server.keys["merchantB"]}` });
      expectJson(res, 200);
    }
  });

  it("accepts each merchant's own key", async () => {
    for (const merchant of ["merchantA", "merchantB"]) {
      expectJson(await client.listAccounts(merchant), 200);
    }
  });
});
