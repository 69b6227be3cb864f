import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import type { CorsOptions } from "../../src/protocols/cors.js";
import { createManualClock } from "../support/manual-clock.js";
import { uniqueReference } from "../support/rest-client.js";
import { startServerProcess } from "../support/server-process.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const shop = "https://shop.example.com";
const stranger = "https://stranger.example.net";

/** What every preflight allows, whatever the path: Connect's and gRPC-Web's request headers, the key and a request id. */
const allowedHeaders =
  "content-type, connect-protocol-version, connect-timeout-ms, connect-content-encoding, connect-accept-encoding, content-encoding, accept-encoding, grpc-message-type, x-grpc-web, x-user-agent, grpc-timeout, authorization, x-request-id";
/** What scripts may read on every answer: Connect's list (gRPC-Web trailers, encodings), then ours. */
const exposedHeaders =
  "Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin, Content-Encoding, Connect-Content-Encoding, Idempotent-Replayed, X-Request-Id, Link, Retry-After, Location";

const createPath = "/payments.v2.PaymentIntentService/CreatePaymentIntent";

/** Every preflight target: an RPC path, a REST collection and item, the OpenAPI document, a probe; with the methods each serves. */
const targets = [
  { name: "an RPC path", path: createPath, method: "POST", allow: "POST" },
  { name: "the REST collection", path: "/v1/v2/payment-intents", method: "POST", allow: "POST, GET, HEAD" },
  { name: "a REST item", path: "/v1/v2/payment-intents/pi_0190a5b2-7c3e-7a41-9d2f-3b8e4c6a1f20", method: "DELETE", allow: "GET, HEAD, DELETE" },
  { name: "the OpenAPI document", path: "/v1/openapi.json", method: "GET", allow: "GET, HEAD" },
  { name: "the liveness probe", path: "/healthz", method: "GET", allow: "GET, HEAD" },
] as const;

/** Headers the transport adds to every response, left out of exact comparisons. */
const transportHeaders = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

async function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!transportHeaders.has(name)) headers[name] = value;
  });
  return { status: res.status, headers, text: await res.text() };
}

/** rawGet sends the request target byte for byte, as fetch's URL parser would not. */
function rawGet(server: TestServer, target: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${server.url}/`, { path: target, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const kept = Object.entries(res.headers).filter(([name]) => !transportHeaders.has(name));
        resolve({ status: res.statusCode ?? 0, headers: Object.fromEntries(kept.map(([name, value]) => [name, String(value)])), text: Buffer.concat(chunks).toString() });
      });
    });
    request.on("error", reject);
  });
}

function preflight(server: { url: string }, path: string, origin: string, method: string): Promise<Answer> {
  return send(`${server.url}${path}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": "authorization,content-type" },
  });
}

/** The CORS part of an answer: every Access-Control-* header and Vary. */
function corsPart(answer: Answer): Record<string, string> {
  return Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.startsWith("access-control-") || name === "vary"));
}

/** The request id every answer carries; removed so the rest compares exactly. */
function withoutRequestId(answer: Answer): Record<string, string> {
  const { "x-request-id": requestId, ...rest } = answer.headers;
  assert.match(requestId ?? "", /^[0-9a-f-]{36}$/, "every answer carries X-Request-Id");
  return rest;
}

const exposedTo = (origin: string) => ({ "access-control-allow-origin": origin, "access-control-expose-headers": exposedHeaders });

function createBody(clientReference = uniqueReference("cors")) {
  return JSON.stringify({ amount: 50000, customerEmail: "ada@example.com", clientReference });
}

/** A server with CORS_ALLOWED_ORIGINS from cors (unset when undefined), and RATE_LIMIT_* from keyLimit. */
async function startServer(
  cors: CorsOptions | undefined,
  extra: Parameters<typeof startTestServer>[0] = {},
  keyLimit?: { ratePerSecond: number; burst: number },
): Promise<TestServer> {
  const origins = cors && (cors.allowedOrigins === "*" ? "*" : cors.allowedOrigins.join(","));
  return startTestServer({
    ...extra,
    settings: {
      ...(origins && { CORS_ALLOWED_ORIGINS: origins }),
      ...(keyLimit && { RATE_LIMIT_RPS: String(keyLimit.ratePerSecond), RATE_LIMIT_BURST: String(keyLimit.burst) }),
    },
  });
}

describe("CORS", () => {
  let listed: TestServer;
  let any: TestServer;
  let off: TestServer;

  before(async () => {
    [listed, any, off] = await Promise.all([startServer({ allowedOrigins: [shop] }), startServer({ allowedOrigins: "*" }), startServer(undefined)]);
  });
  after(() => Promise.all([listed?.close(), any?.close(), off?.close()]));

  describe("preflight from an allowed origin", () => {
    for (const target of targets) {
      it(`answers 204 on ${target.name} with the methods it serves, the headers, Max-Age and Vary: Origin`, async () => {
        const answer = await preflight(listed, target.path, shop, target.method);
        assert.equal(answer.status, 204);
        assert.equal(answer.text, "");
        assert.deepEqual(withoutRequestId(answer), {
          "access-control-allow-origin": shop,
          "access-control-allow-methods": target.allow,
          "access-control-allow-headers": allowedHeaders,
          "access-control-max-age": "7200",
          "cache-control": "no-store",
          vary: "Origin",
        });
      });
    }

    it('answers "*" for any origin in "*" mode, without Vary', async () => {
      for (const target of targets) {
        const answer = await preflight(any, target.path, stranger, target.method);
        assert.equal(answer.status, 204, target.name);
        assert.deepEqual(withoutRequestId(answer), {
          "access-control-allow-origin": "*",
          "access-control-allow-methods": target.allow,
          "access-control-allow-headers": allowedHeaders,
          "access-control-max-age": "7200",
          "cache-control": "no-store",
        });
      }
    });
  });

  describe("an origin that is not allowed, or CORS off", () => {
    /** What an OPTIONS without CORS gets: the 405 of any other method the target does not serve. */
    function refusedPreflight(target: (typeof targets)[number]) {
      const text = JSON.stringify({ status: 405, title: "Method Not Allowed", message: `OPTIONS is not allowed on ${target.path}` });
      const headers: Record<string, string> = { allow: target.allow, "cache-control": "no-store", "content-type": "application/json", "content-length": String(text.length) };
      return { status: 405, text, headers };
    }

    it("CORS off: every preflight is 405 JSON with Allow, and no CORS header", async () => {
      for (const target of targets) {
        const answer = await preflight(off, target.path, shop, target.method);
        assert.deepEqual({ status: answer.status, text: answer.text, headers: withoutRequestId(answer) }, refusedPreflight(target), target.name);
      }
    });

    it("another origin gets the CORS-off answer (plus Vary: Origin), except the OpenAPI document", async () => {
      for (const target of targets.filter((t) => t.path !== "/v1/openapi.json")) {
        const answer = await preflight(listed, target.path, stranger, target.method);
        const want = refusedPreflight(target);
        assert.deepEqual({ status: answer.status, text: answer.text, headers: withoutRequestId(answer) }, { ...want, headers: { ...want.headers, vary: "Origin" } }, target.name);
      }
    });

    it("the OpenAPI document is readable from any origin whenever CORS is on, and from none when it is off", async () => {
      const document = `/v1/openapi.json`;
      assert.deepEqual(corsPart(await preflight(listed, document, stranger, "GET")), {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, HEAD",
        "access-control-allow-headers": allowedHeaders,
        "access-control-max-age": "7200",
        vary: "Origin",
      });
      const read = await send(`${listed.url}${document}`, { headers: { origin: stranger } });
      assert.equal(read.status, 200);
      // The document's own Vary (it is served gzipped to who accepts it) adds to Origin, never replaces it.
      assert.deepEqual(corsPart(read), { ...exposedTo("*"), vary: "Origin, accept-encoding" });
      assert.equal(JSON.parse(read.text).openapi.startsWith("3."), true);
      // A listed origin is named, as on every other route.
      assert.deepEqual(corsPart(await send(`${listed.url}${document}`, { headers: { origin: shop } })), { ...exposedTo(shop), vary: "Origin, accept-encoding" });
      assert.deepEqual(corsPart(await send(`${any.url}${document}`, { headers: { origin: stranger } })), { ...exposedTo("*"), vary: "accept-encoding" });
      assert.deepEqual(corsPart(await send(`${off.url}${document}`, { headers: { origin: stranger } })), { vary: "accept-encoding" });
    });

    it("answers a request from another origin without CORS headers, otherwise as usual", async () => {
      const list = await send(`${listed.restUrl}/v2/payment-intents`, { headers: { origin: stranger, authorization: listed.bearer() } });
      assert.equal(list.status, 200);
      assert.deepEqual(corsPart(list), { vary: "Origin" });
      const offList = await send(`${off.restUrl}/v2/payment-intents`, { headers: { origin: shop, authorization: off.bearer() } });
      assert.equal(offList.status, 200);
      assert.deepEqual(corsPart(offList), {});
    });

    it("a request without Origin (a server, curl, a probe) gets no CORS header, only Vary", async () => {
      const probe = await send(`${listed.url}/healthz`);
      assert.equal(probe.status, 200);
      assert.deepEqual(corsPart(probe), { vary: "Origin" });
      assert.deepEqual(corsPart(await send(`${any.url}/healthz`)), {});
    });
  });

  describe("actual requests from an allowed origin", () => {
    it("REST create, replay and list carry Allow-Origin, Expose-Headers and Vary: Origin", async () => {
      const headers = { origin: shop, authorization: listed.bearer(), "content-type": "application/json" };
      const body = createBody();
      const created = await send(`${listed.restUrl}/v2/payment-intents`, { method: "POST", headers, body });
      assert.equal(created.status, 201);
      assert.deepEqual(corsPart(created), { ...exposedTo(shop), vary: "Origin" });
      assert.ok(created.headers["location"], "Location is there to be read");
      const replayed = await send(`${listed.restUrl}/v2/payment-intents`, { method: "POST", headers, body });
      assert.equal(replayed.status, 200);
      assert.equal(replayed.headers["idempotent-replayed"], "true");
      assert.deepEqual(corsPart(replayed), { ...exposedTo(shop), vary: "Origin" });
      const list = await send(`${listed.restUrl}/v2/payment-intents?pageSize=1`, { headers });
      assert.equal(list.status, 200);
      assert.deepEqual(corsPart(list), { ...exposedTo(shop), vary: "Origin" });
    });

    it("Connect and gRPC-Web calls carry them too", async () => {
      const connect = await send(`${listed.url}${createPath}`, {
        method: "POST",
        headers: { origin: shop, authorization: listed.bearer(), "content-type": "application/json", "connect-protocol-version": "1" },
        body: createBody(),
      });
      assert.equal(connect.status, 200, connect.text);
      assert.deepEqual(corsPart(connect), { ...exposedTo(shop), vary: "Origin" });
      // An empty ListSettlementAccountsRequest in one gRPC-Web frame.
      const grpcWeb = await send(`${listed.url}/payments.v2.SettlementAccountService/ListSettlementAccounts`, {
        method: "POST",
        headers: { origin: shop, authorization: listed.bearer(), "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
        body: new Uint8Array([0, 0, 0, 0, 0]),
      });
      assert.equal(grpcWeb.status, 200);
      assert.equal(grpcWeb.headers["content-type"], "application/grpc-web+proto");
      assert.deepEqual(corsPart(grpcWeb), { ...exposedTo(shop), vary: "Origin" });
    });

    it('"*" mode names no origin and sends no Vary', async () => {
      const list = await send(`${any.restUrl}/v2/payment-intents`, { headers: { origin: stranger, authorization: any.bearer() } });
      assert.equal(list.status, 200);
      assert.deepEqual(corsPart(list), exposedTo("*"));
    });
  });

  describe("errors are readable by the page", () => {
    const cases = [
      { name: "REST 401 (no key)", path: "/v1/v2/payment-intents", init: {}, status: 401 },
      { name: "Connect 401 (no key)", path: createPath, init: { method: "POST", headers: { "content-type": "application/json" }, body: createBody() }, status: 401 },
      { name: "REST 404 (no such intent)", path: "/v1/v2/payment-intents/pi_0190a5b2-7c3e-7a41-9d2f-3b8e4c6a1f20", init: { key: true }, status: 404 },
      { name: "404 (no route)", path: "/v1/v2/nothing-here", init: {}, status: 404 },
      { name: "405 (GET on an RPC path)", path: createPath, init: {}, status: 405 },
      { name: "415 (RPC without an RPC type)", path: createPath, init: { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" }, status: 415 },
    ] as const;

    for (const { name, path, init, status } of cases) {
      it(`${name} carries Allow-Origin, Expose-Headers and Vary: Origin`, async () => {
        const { key, ...request } = { key: false, method: "GET", headers: {}, ...init } as { key: boolean; method: string; headers: Record<string, string>; body?: string };
        const headers = { ...request.headers, origin: shop, ...(key ? { authorization: listed.bearer() } : {}) };
        const answer = await send(`${listed.url}${path}`, { ...request, headers });
        assert.equal(answer.status, status, answer.text);
        assert.deepEqual(corsPart(answer), { ...exposedTo(shop), vary: "Origin" });
        assert.equal(answer.headers["access-control-allow-credentials"], undefined);
      });
    }

    it("404 for a dot segment (sent as is: fetch would resolve it) carries them", async () => {
      const answer = await rawGet(listed, "/v1/v2/payment-intents/%2e%2e/settlement-accounts", { origin: shop });
      assert.equal(answer.status, 404);
      assert.deepEqual(corsPart(answer), { ...exposedTo(shop), vary: "Origin" });
    });

    it("429 from the rate limit carries them, with Retry-After readable", async () => {
      const limit = { ratePerSecond: 1, burst: 1 };
      const clock = createManualClock();
      const limited = await startServer(
        { allowedOrigins: [shop] },
        { clock },
        limit,
      );
      try {
        const headers = { origin: shop, authorization: limited.bearer() };
        assert.equal((await send(`${limited.restUrl}/v2/payment-intents`, { headers })).status, 200);
        const rest = await send(`${limited.restUrl}/v2/payment-intents`, { headers });
        assert.equal(rest.status, 429);
        assert.equal(rest.headers["retry-after"], "1");
        assert.deepEqual(corsPart(rest), { ...exposedTo(shop), vary: "Origin" });
        const connect = await send(`${limited.url}/payments.v2.SettlementAccountService/ListSettlementAccounts`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: "{}",
        });
        assert.equal(connect.status, 429);
        assert.deepEqual(corsPart(connect), { ...exposedTo(shop), vary: "Origin" });
      } finally {
        await limited.close();
      }
    });
  });

  it("never allows credentials, on any answer", async () => {
    const answers = [
      ...(await Promise.all(targets.map((t) => preflight(listed, t.path, shop, t.method)))),
      ...(await Promise.all(targets.map((t) => preflight(any, t.path, stranger, t.method)))),
      await send(`${listed.restUrl}/v2/payment-intents`, { headers: { origin: shop, authorization: listed.bearer(), cookie: "session=1" } }),
      await send(`${any.restUrl}/v2/payment-intents`, { headers: { origin: stranger } }),
    ];
    for (const answer of answers) assert.equal(answer.headers["access-control-allow-credentials"], undefined);
  });
});

describe("CORS_ALLOWED_ORIGINS in the server process", () => {
  it("is read from the environment and applied: listed origins get CORS, others do not", async () => {
    const server = await startServerProcess({ env: { CORS_ALLOWED_ORIGINS: `${shop}, http://localhost:5173` } });
    try {
      const path = "/payments.v2.PaymentIntentService/ListPaymentIntents";
      for (const origin of [shop, "http://localhost:5173"]) {
        const answer = await preflight(server, path, origin, "POST");
        assert.equal(answer.status, 204, origin);
        assert.equal(answer.headers["access-control-allow-origin"], origin);
      }
      const refused = await preflight(server, path, stranger, "POST");
      assert.equal(refused.status, 405);
      assert.deepEqual(corsPart(refused), { vary: "Origin" });
    } finally {
      await server.stop();
    }
  });
});
