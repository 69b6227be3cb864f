import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { captureLogs, waitForLine, type CapturedLogs } from "../observability/support/capture-logs.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { envelope, http1, http2Request, type WireResponse } from "./support/wire.js";

/**
 * Targets a URL parser would resolve to a real route
 * (/v1/v2/settlement-accounts, or an RPC), with "." and ".." segments plain,
 * percent-encoded in either case, or mixed.
 */
const dotTargets: { target: string; method: string; resolvesTo: string }[] = [
  { method: "GET", target: "/v1/v2/payment-intents/%2e%2e/settlement-accounts", resolvesTo: "/v1/v2/settlement-accounts" },
  { method: "GET", target: "/v1/v2/payment-intents/../settlement-accounts", resolvesTo: "/v1/v2/settlement-accounts" },
  { method: "GET", target: "/v1/v2/payment-intents/%2E%2E/settlement-accounts", resolvesTo: "/v1/v2/settlement-accounts" },
  { method: "GET", target: "/v1/v2/payment-intents/.%2e/settlement-accounts", resolvesTo: "/v1/v2/settlement-accounts" },
  { method: "GET", target: "/v1/v2/payment-intents/%2e./settlement-accounts", resolvesTo: "/v1/v2/settlement-accounts" },
  { method: "GET", target: "/v1/v2/./settlement-accounts", resolvesTo: "/v1/v2/settlement-accounts" },
  { method: "GET", target: "/v1/v2/%2e/settlement-accounts", resolvesTo: "/v1/v2/settlement-accounts" },
  { method: "GET", target: "/v1/v2/settlement-accounts/.", resolvesTo: "/v1/v2/settlement-accounts/" },
  { method: "GET", target: "/v1/v2/payment-intents/x/%2e%2e", resolvesTo: "/v1/v2/payment-intents/" },
  { method: "GET", target: "/v1/v2/settlement-accounts/%2e%2e/settlement-accounts?x=1", resolvesTo: "/v1/v2/settlement-accounts" },
  { method: "GET", target: "/checkout/../v1/v2/settlement-accounts", resolvesTo: "/v1/v2/settlement-accounts" },
  {
    method: "POST",
    target: "/payments.v2.PaymentIntentService/%2e%2e/payments.v2.SettlementAccountService/ListSettlementAccounts",
    resolvesTo: "/payments.v2.SettlementAccountService/ListSettlementAccounts",
  },
];

// Fails on e1d5b66: the gateway routed on the resolved URL, so these served the accounts list (200), logged as (unmatched).
describe("request targets with dot segments", () => {
  let server: TestServer;
  let logs: CapturedLogs;
  let seq = 0;

  before(async () => {
    logs = captureLogs();
    server = await startTestServer({ logger: logs.logger, store: "memory" });
  });
  after(() => server.close());

  const transports: { name: string; send(method: string, target: string, headers: Record<string, string>, body?: Uint8Array): Promise<WireResponse> }[] = [
    { name: "HTTP/1.1", send: (method, target, headers, body) => http1(server.port, method, target, headers, body) },
    { name: "HTTP/2", send: (method, target, headers, body) => http2Request(server.port, method, target, headers, body) },
  ];

  for (const transport of transports) {
    for (const { method, target, resolvesTo } of dotTargets) {
      it(`answers ${method} ${target} over ${transport.name} with 404, not ${resolvesTo}, and logs that path`, async () => {
        const requestId = `dots-${++seq}`;
        const rpc = method === "POST";
        const headers: Record<string, string> = { authorization: server.bearer(), "x-request-id": requestId };
        if (rpc) headers["content-type"] = "application/grpc-web+proto";
        const res = await transport.send(method, target, headers, rpc ? envelope(0, new Uint8Array()) : undefined);
        const path = target.split("?")[0]!;
        assert.equal(res.status, 404, res.body.toString());
        assert.deepEqual(JSON.parse(res.body.toString()), { status: 404, title: "Not Found", message: `no route for ${path}` });
        const line = await waitForLine(logs, (l) => l["msg"] === "request" && l["requestId"] === requestId);
        assert.deepEqual([line["route"], line["status"], line["path"], line["merchantId"]], ["(unmatched)", 404, path, undefined]);
      });
    }
  }

  it("still serves ids and segments that merely contain dots", async () => {
    const res = await http1(server.port, "GET", "/v1/v2/payment-intents/..x", { authorization: server.bearer() });
    assert.deepEqual([res.status, JSON.parse(res.body.toString()).message], [404, "payment intent ..x not found"]);
    const encodedSlash = await http1(server.port, "GET", "/v1/v2/payment-intents/%2e%2e%2fsettlement-accounts", { authorization: server.bearer() });
    assert.deepEqual([encodedSlash.status, JSON.parse(encodedSlash.body.toString()).message], [404, "payment intent ../settlement-accounts not found"]);
  });
});
