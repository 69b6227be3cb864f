import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createRestClient,
  expectError,
  expectJson,
  type PaymentIntentJson,
  type RestClient,
  type RestRequestOptions,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const limit = 64 * 1024;

/** A valid create body padded with spaces to exactly size bytes. */
function paddedBody(size: number, clientReference: string): string {
  const json = JSON.stringify({ amount: 100, customerEmail: "ada@example.com", clientReference });
  assert.ok(json.length <= size);
  return `${json}${" ".repeat(size - json.length)}`;
}

const hugeMalformed = `{"amount": ${"9".repeat(limit * 2)}`;

describe("REST routing", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  const notFound: { name: string; method: string; path: (server: TestServer) => string }[] = [
    { name: "an unknown path under the base path", method: "GET", path: () => "/v2/payments" },
    { name: "an unknown version", method: "GET", path: () => "/v3/payment-intents" },
    { name: "a path below an item", method: "GET", path: () => "/v2/payment-intents/pi_1/captures" },
    { name: "a trailing slash", method: "GET", path: () => "/v2/payment-intents/" },
    { name: "the route without the base path", method: "GET", path: (s) => `${s.url}/v2/payment-intents` },
    { name: "a base path prefix", method: "GET", path: (s) => `${s.url}/v1x/v2/payment-intents` },
    { name: "the root", method: "GET", path: (s) => `${s.url}/` },
    { name: "an unknown path with POST", method: "POST", path: () => "/v2/payouts" },
  ];
  for (const { name, method, path } of notFound) {
    it(`answers 404 for ${name}, before checking the key`, async () => {
      expectError(await client.request(method, path(server), { authorization: null }), 404, /no route/);
      expectError(await client.request(method, path(server)), 404, /no route/);
    });
  }

  const notAllowed: { method: string; path: string; allow: string[] }[] = [
    { method: "PUT", path: "/v2/payment-intents", allow: ["GET", "HEAD", "POST"] },
    { method: "DELETE", path: "/v2/payment-intents", allow: ["GET", "HEAD", "POST"] },
    { method: "PATCH", path: "/v2/payment-intents", allow: ["GET", "HEAD", "POST"] },
    { method: "POST", path: "/v2/payment-intents/pi_1", allow: ["DELETE", "GET", "HEAD"] },
    { method: "PUT", path: "/v2/payment-intents/pi_1", allow: ["DELETE", "GET", "HEAD"] },
    { method: "DELETE", path: "/v2/settlement-accounts", allow: ["GET", "HEAD", "POST"] },
  ];
  for (const { method, path, allow } of notAllowed) {
    it(`answers 405 with Allow for ${method} ${path}, before checking the key`, async () => {
      for (const options of [{ authorization: null }, {}] as RestRequestOptions[]) {
        const res = await client.request(method, path, options);
        expectError(res, 405, new RegExp(`${method}.*not allowed`));
        const allowed = (res.headers.get("allow") ?? "").split(",").map((m) => m.trim()).sort();
        assert.deepEqual(allowed, allow);
      }
    });
  }

  it("serves the routes under another BASE_PATH", async () => {
    const other = await startTestServer({ basePath: "/api/pay" });
    try {
      const otherClient = createRestClient(other);
      const res = await otherClient.createIntent({ amount: 100, customerEmail: "ada@example.com", clientReference: "base" });
      const intent = expectJson<PaymentIntentJson>(res, 201);
      assert.equal(res.headers.get("location"), `/api/pay/v2/payment-intents/${intent.id}`);
      expectJson(await otherClient.request("GET", `${other.url}${res.headers.get("location")}`), 200);
      expectError(await otherClient.request("GET", `${other.url}/v1/v2/payment-intents`), 404, /no route/);
    } finally {
      await other.close();
    }
  });

  it("answers every response, success or error, as application/json", async () => {
    const responses = [
      await client.listIntents(),
      await client.request("GET", "/nowhere"),
      await client.request("PUT", "/v2/payment-intents"),
      await client.request("GET", "/v2/payment-intents", { authorization: null }),
    ];
    for (const res of responses) assert.match(res.headers.get("content-type") ?? "", /^application\/json(;|$)/);
  });
});

describe("REST media type and size limits", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  const valid = JSON.stringify({ amount: 100, customerEmail: "ada@example.com", clientReference: "media" });

  const unsupported: { name: string; contentType: string | null }[] = [
    { name: "no Content-Type", contentType: null },
    { name: "text/plain", contentType: "text/plain" },
    { name: "application/x-www-form-urlencoded", contentType: "application/x-www-form-urlencoded" },
    { name: "application/merge-patch+json", contentType: "application/merge-patch+json" },
    { name: "a charset other than UTF-8", contentType: "application/json; charset=iso-8859-1" },
  ];
  for (const { name, contentType } of unsupported) {
    it(`answers 415 for ${name}`, async () => {
      expectError(
        await client.request("POST", "/v2/payment-intents", { raw: valid, contentType }),
        415,
        /Content-Type.*application\/json/,
      );
    });
  }

  for (const contentType of ["application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"]) {
    it(`accepts Content-Type ${contentType}`, async () => {
      const clientReference = `media-${contentType.replace(/[^a-z]/gi, "")}`;
      const raw = JSON.stringify({ amount: 100, customerEmail: "ada@example.com", clientReference });
      expectJson(await client.request("POST", "/v2/payment-intents", { raw, contentType }), 201);
    });
  }

  it("accepts a body of exactly 64 KiB", async () => {
    const raw = paddedBody(limit, "exactly-64k");
    expectJson(await client.request("POST", "/v2/payment-intents", { raw }), 201);
  });

  it("answers 413 for a body one byte over 64 KiB", async () => {
    const raw = paddedBody(limit + 1, "over-64k");
    expectError(await client.request("POST", "/v2/payment-intents", { raw }), 413, /larger than 65536 bytes/);
  });

  it("answers 413 for a streamed body without Content-Length that grows past 64 KiB", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 8) return controller.close();
        sent += 1;
        controller.enqueue(sent === 1 ? new TextEncoder().encode("{") : chunk);
      },
    });
    const res = await fetch(`${server.restUrl}/v2/payment-intents`, {
      method: "POST",
      headers: { authorization: server.bearer(), "content-type": "application/json" },
      body: stream,
      duplex: "half",
    });
    expectError({ status: res.status, headers: res.headers, text: await res.text() }, 413, /larger than/);
  });
});

describe("REST order of checks: route, key, media type, size, body", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  const cases: { name: string; method?: string; path?: string; options: RestRequestOptions; status: number; message: RegExp }[] = [
    {
      name: "an unknown path with no key, a wrong media type and a huge body",
      path: "/v2/nothing",
      options: { authorization: null, raw: hugeMalformed, contentType: "text/plain" },
      status: 404,
      message: /no route/,
    },
    {
      name: "a wrong method with no key and a huge body",
      method: "PUT",
      options: { authorization: null, raw: hugeMalformed },
      status: 405,
      message: /not allowed/,
    },
    {
      name: "a bad key with a wrong media type",
      options: { authorization: "Bearer wrong", raw: "{}", contentType: "text/plain" },
      status: 401,
      message: /API key/,
    },
    {
      name: "no key with a huge malformed body",
      options: { authorization: null, raw: hugeMalformed },
      status: 401,
      message: /Authorization/,
    },
    {
      name: "a wrong media type with a huge body",
      options: { raw: hugeMalformed, contentType: "text/plain" },
      status: 415,
      message: /Content-Type/,
    },
    {
      name: "a missing media type with a malformed body",
      options: { raw: "{", contentType: null },
      status: 415,
      message: /Content-Type/,
    },
    {
      name: "a huge malformed body",
      options: { raw: hugeMalformed },
      status: 413,
      message: /larger than/,
    },
    {
      name: "a malformed body with an unknown query parameter",
      path: "/v2/payment-intents?debug=1",
      options: { raw: "{" },
      status: 400,
      message: /not valid JSON/,
    },
  ];
  for (const { name, method = "POST", path = "/v2/payment-intents", options, status, message } of cases) {
    it(`answers ${status} for ${name}`, async () => {
      const res = await client.request(method, path, options);
      expectError(res, status, message);
      if (status === 401) assert.equal(res.headers.get("www-authenticate"), "Bearer");
      if (status === 405) assert.ok(res.headers.get("allow"));
    });
  }

  it("answers 400 naming a query parameter on a create that is otherwise valid", async () => {
    const res = await client.request("POST", "/v2/payment-intents?debug=1", {
      json: { amount: 100, customerEmail: "ada@example.com", clientReference: "query" },
    });
    expectError(res, 400, /unknown query parameter debug\b/);
  });
});
