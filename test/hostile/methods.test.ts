import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { http1, http2Request, type WireResponse } from "./support/wire.js";

const rpcPaths = [
  "/payments.v2.PaymentIntentService/CreatePaymentIntent",
  "/payments.v2.PaymentIntentService/ListPaymentIntents",
  "/payments.v2.SettlementAccountService/ListSettlementAccounts",
  "/grpc.health.v1.Health/Check",
  "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
];

/** The §7 error body of a 405, and its Allow header as a sorted list. */
function assertMethodNotAllowed(res: WireResponse, method: string, path: string, allow: string[], what: string) {
  assert.equal(res.status, 405, `${what}: ${res.body.toString()}`);
  assert.deepEqual(
    String(res.headers["allow"] ?? "").split(",").map((m) => m.trim()).sort(),
    [...allow].sort(),
    `${what}: Allow`,
  );
  assert.match(String(res.headers["content-type"]), /^application\/json\b/, what);
  if (method === "HEAD") return assert.equal(res.body.length, 0, `${what}: a HEAD answer has no body`);
  assert.deepEqual(JSON.parse(res.body.toString()), { status: 405, title: "Method Not Allowed", message: `${method} is not allowed on ${path}` }, what);
}

describe("HTTP methods on every route", () => {
  let server: TestServer;
  let intentId: string;
  let checkoutPath: string;
  let docsAsset: string;

  before(async () => {
    server = await startTestServer({ store: "memory" });
    const created = await http1(
      server.port,
      "POST",
      "/v1/v2/payment-intents",
      { authorization: server.bearer(), "content-type": "application/json" },
      JSON.stringify({ amount: 500, customerEmail: "ada@example.com", clientReference: "methods-1" }),
    );
    const intent = JSON.parse(created.body.toString()) as { id: string; checkoutLink: string };
    intentId = intent.id;
    checkoutPath = new URL(intent.checkoutLink).pathname;
    const docs = (await http1(server.port, "GET", "/v1/docs")).body.toString();
    docsAsset = /(?:src|href)="(\/v1\/docs\/assets\/[^"]+)"/.exec(docs)![1]!;
  });
  after(() => server.close());

  // Fails on e1d5b66: HEAD on a REST route was 405 (Allow: POST, GET).
  describe("HEAD (RFC 9110 §9.3.2)", () => {
    const getRoutes = () => [
      { path: "/v1/v2/payment-intents", key: true },
      { path: "/v1/v2/payment-intents?pageSize=1", key: true },
      { path: `/v1/v2/payment-intents/${intentId}`, key: true },
      { path: "/v1/v2/payment-intents/pi_unknown", key: true },
      { path: "/v1/v2/settlement-accounts", key: true },
      { path: "/v1/v2/settlement-accounts", key: false },
      { path: "/healthz", key: false },
      { path: "/readyz", key: false },
      { path: "/v1/openapi.json", key: false },
      { path: "/v1/docs", key: false },
      { path: docsAsset, key: false },
      { path: checkoutPath, key: false },
      { path: "/checkout/AAAAAAAAAAAAAAAAAAAAAAAAAAAA", key: false },
    ];

    it("answers every GET route as GET does, without a body: same status, type and length", async () => {
      for (const { path, key } of getRoutes()) {
        const headers: Record<string, string> = key ? { authorization: server.bearer() } : {};
        const get = await http1(server.port, "GET", path, headers);
        const head = await http1(server.port, "HEAD", path, headers);
        const what = `HEAD ${path}${key ? "" : " (no key)"}`;
        assert.equal(head.status, get.status, what);
        assert.equal(head.headers["content-type"], get.headers["content-type"], what);
        assert.equal(head.headers["content-length"], get.headers["content-length"], what);
        assert.equal(head.body.length, 0, what);
        if (path.startsWith("/v1/v2/")) assert.ok(head.headers["x-request-id"], `${what}: X-Request-Id`);
      }
    });

    it("answers HEAD /metrics with 200 and no body", async () => {
      const head = await http1(server.port, "HEAD", "/metrics");
      assert.deepEqual([head.status, head.body.length], [200, 0]);
      assert.match(String(head.headers["content-type"]), /^text\/plain/);
    });

    it("serves HEAD over HTTP/2 too", async () => {
      const head = await http2Request(server.port, "HEAD", "/v1/v2/settlement-accounts", { authorization: server.bearer() });
      const get = await http2Request(server.port, "GET", "/v1/v2/settlement-accounts", { authorization: server.bearer() });
      assert.deepEqual([head.status, head.headers["content-length"], head.body.length], [200, get.headers["content-length"], 0]);
    });

    it("does not run a DELETE's or a POST's procedure for HEAD", async () => {
      const head = await http1(server.port, "HEAD", "/v1/v2/payment-intents", { authorization: server.bearer(), "content-type": "application/json" });
      assert.equal(head.status, 200, "HEAD on the collection is the list, not a create");
      const get = await http1(server.port, "GET", `/v1/v2/payment-intents/${intentId}`, { authorization: server.bearer() });
      assert.equal(JSON.parse(get.body.toString()).status, "pending", "HEAD on an item is not a delete");
    });
  });

  // Fails on e1d5b66: connect-node's 405 on an RPC path had neither Allow nor a body.
  describe("405 on RPC paths", () => {
    for (const path of rpcPaths) {
      for (const method of ["GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
        it(`answers ${method} ${path} with 405, Allow: POST, in the error shape`, async () => {
          const res = await http1(server.port, method, path, { authorization: server.bearer(), "content-type": "application/json" });
          assertMethodNotAllowed(res, method, path, ["POST"], `${method} ${path}`);
        });
      }
    }

    it("answers the same over HTTP/2", async () => {
      const path = rpcPaths[1]!;
      const res = await http2Request(server.port, "GET", path, { "content-type": "application/grpc", te: "trailers" });
      assertMethodNotAllowed(res, "GET", path, ["POST"], `HTTP/2 GET ${path}`);
    });
  });

  // Fails on e1d5b66: OPTIONS on RPC paths had no Allow, REST's Allow left out HEAD, checkout paths answered HTML.
  describe("OPTIONS without CORS", () => {
    const cases = () => [
      { path: "/v1/v2/payment-intents", allow: ["GET", "HEAD", "POST"] },
      { path: `/v1/v2/payment-intents/${intentId}`, allow: ["GET", "HEAD", "DELETE"] },
      { path: "/v1/v2/settlement-accounts", allow: ["GET", "HEAD", "POST"] },
      { path: "/healthz", allow: ["GET", "HEAD"] },
      { path: "/metrics", allow: ["GET", "HEAD"] },
      { path: "/v1/openapi.json", allow: ["GET", "HEAD"] },
      { path: checkoutPath, allow: ["GET", "HEAD"] },
      { path: `${checkoutPath}/pay`, allow: ["POST"] },
    ];

    it("is a 405 in the error shape with Allow, preflight headers or not, and no CORS headers", async () => {
      for (const { path, allow } of cases()) {
        const preflight: Record<string, string> = { origin: "https://shop.example", "access-control-request-method": "POST" };
        for (const headers of [{}, preflight]) {
          const res = await http1(server.port, "OPTIONS", path, headers);
          assertMethodNotAllowed(res, "OPTIONS", path, allow, `OPTIONS ${path} ${JSON.stringify(headers)}`);
          assert.equal(res.headers["access-control-allow-origin"], undefined);
        }
      }
    });
  });
});
