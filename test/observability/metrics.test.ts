import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { createClient } from "@connectrpc/connect";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { instrumentStore } from "../../src/observability/instrument-store.js";
import { createServiceMetrics, type ServiceMetrics } from "../../src/observability/service-metrics.js";
import { rpcProtocols } from "../rpc/support/rpc-helpers.js";
import { createRestClient, expectJson, type PaymentIntentJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { valueOf } from "./support/prometheus-text.js";

const metricsToken = "metrics-token-0123456789abcdef";
const createProcedure = "/payments.v2.PaymentIntentService/CreatePaymentIntent";

/** The labels each RPC protocol's successful create is counted under. */
const rpcLabels: Record<string, { protocol: string; status: string }> = {
  "Connect JSON over HTTP/1.1": { protocol: "connect", status: "200" },
  "Connect binary over HTTP/2": { protocol: "connect", status: "200" },
  "gRPC-Web over HTTP/1.1": { protocol: "grpc-web", status: "200" },
  "gRPC over HTTP/2": { protocol: "grpc", status: "200" },
};

/** startMetricsServer runs the service with its metrics as main.ts has them, /metrics behind token when given. */
async function startMetricsServer(token?: string): Promise<{ server: TestServer; metrics: ServiceMetrics }> {
  const server = await startTestServer({ settings: token === undefined ? {} : { METRICS_TOKEN: token } });
  return { server, metrics: server.service.metrics };
}

describe("GET /metrics", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    ({ server } = await startMetricsServer(metricsToken));
    client = createRestClient(server);
  });
  after(() => server.close());

  /** The current metrics text, fetched as a scraper would. */
  const scrape = async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4; charset=utf-8$/);
    return res.text();
  };
  /** Waits until the request log has counted the response (it is counted once the response is sent). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  const body = (reference: string) => ({ amount: 2500, customerEmail: "ada@example.com", clientReference: reference });

  it("counts a REST create under protocol rest, its route template and status 201, and times it", async () => {
    const labels = { protocol: "rest", route: "/v2/payment-intents", status: "201", code: "" };
    const before = await scrape();
    expectJson(await client.createIntent(body("metrics-rest-1")), 201);
    await settle();
    const after = await scrape();
    assert.equal(valueOf(after, "payments_requests_total", labels) - valueOf(before, "payments_requests_total", labels), 1);
    const timing = { protocol: "rest", route: "/v2/payment-intents" };
    assert.equal(
      valueOf(after, "payments_request_duration_seconds_count", timing) - valueOf(before, "payments_request_duration_seconds_count", timing),
      1,
    );
    assert.ok(valueOf(after, "payments_request_duration_seconds_sum", timing) > 0);
  });

  it("counts REST errors by their status, under the route's template", async () => {
    const labels = { protocol: "rest", route: "/v2/payment-intents/{id}", status: "404", code: "" };
    const before = valueOf(await scrape(), "payments_requests_total", labels);
    await client.getIntent("pi_nope");
    await client.getIntent("pi_nope_either");
    await settle();
    assert.equal(valueOf(await scrape(), "payments_requests_total", labels) - before, 2);
  });

  for (const protocol of rpcProtocols) {
    it(`counts a create over ${protocol.name} under its protocol, the procedure, the HTTP status and code OK`, async () => {
      const { protocol: name, status } = rpcLabels[protocol.name]!;
      const labels = { protocol: name, route: createProcedure, status, code: "OK" };
      const before = valueOf(await scrape(), "payments_requests_total", labels);
      const rpc = createClient(PaymentIntentService, protocol.transport(server.url, []));
      await rpc.createPaymentIntent(
        { amount: 2500n, customerEmail: "ada@example.com", clientReference: `metrics-${protocol.name.replace(/[^A-Za-z0-9]+/g, "-")}` },
        { headers: { authorization: server.bearer() } },
      );
      await settle();
      assert.equal(valueOf(await scrape(), "payments_requests_total", labels) - before, 1);
    });
  }

  it("counts a failed RPC with its code", async () => {
    const grpc = rpcProtocols.find((p) => p.name === "gRPC over HTTP/2")!;
    const labels = { protocol: "grpc", route: createProcedure, status: "200", code: "Unauthenticated" };
    const before = valueOf(await scrape(), "payments_requests_total", labels);
    const rpc = createClient(PaymentIntentService, grpc.transport(server.url, []));
    await rpc.createPaymentIntent({ amount: 1n, customerEmail: "ada@example.com", clientReference: "x" }).catch(() => {});
    await settle();
    assert.equal(valueOf(await scrape(), "payments_requests_total", labels) - before, 1);
  });

  it("counts each real create once in payments_intents_created_total, and no replay", async () => {
    const before = valueOf(await scrape(), "payments_intents_created_total");
    expectJson(await client.createIntent(body("metrics-created-1")), 201);
    expectJson(await client.createIntent(body("metrics-created-1")), 200);
    expectJson(await client.createIntent(body("metrics-created-1")), 200);
    const rpc = createClient(PaymentIntentService, rpcProtocols.at(-1)!.transport(server.url, []));
    const request = { amount: 2500n, customerEmail: "ada@example.com", clientReference: "metrics-created-2" };
    await rpc.createPaymentIntent(request, { headers: { authorization: server.bearer() } });
    await rpc.createPaymentIntent(request, { headers: { authorization: server.bearer() } });
    assert.equal(valueOf(await scrape(), "payments_intents_created_total") - before, 2);
  });

  it("counts a delete as the pending → cancelled transition", async () => {
    const labels = { from: "pending", to: "cancelled" };
    const before = valueOf(await scrape(), "payments_intent_transitions_total", labels);
    const intent = expectJson<PaymentIntentJson>(await client.createIntent(body("metrics-delete-1")), 201);
    expectJson(await client.deleteIntent(intent.id), 200);
    await client.deleteIntent(intent.id); // already deleted: 404, no transition
    assert.equal(valueOf(await scrape(), "payments_intent_transitions_total", labels) - before, 1);
  });

  it("times store calls by store, operation and outcome", async () => {
    const insert = { store: "payment_intents", operation: "insert", outcome: "ok" };
    const list = { store: "settlement_accounts", operation: "listByMerchant", outcome: "ok" };
    const before = await scrape();
    expectJson(await client.createIntent(body("metrics-store-1")), 201);
    expectJson(await client.listAccounts(), 200);
    const after = await scrape();
    for (const labels of [insert, list]) {
      const delta =
        valueOf(after, "payments_store_call_duration_seconds_count", labels) -
        valueOf(before, "payments_store_call_duration_seconds_count", labels);
      assert.equal(delta, 1, JSON.stringify(labels));
    }
  });

  it("asks for the token: 401 with WWW-Authenticate without it or with a wrong one, 200 with it", async () => {
    for (const authorization of [undefined, "Bearer wrong-token-0123456789", `Basic ${metricsToken}`, `Bearer ${metricsToken}x`, metricsToken]) {
      const res = await fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });
      assert.equal(res.status, 401, String(authorization));
      assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="metrics"');
      assert.ok(!(await res.text()).includes("payments_"));
    }
    const lowerCase = await fetch(`${server.url}/metrics`, { headers: { authorization: `bearer ${metricsToken}` } });
    assert.equal(lowerCase.status, 200);
  });

  it("refuses the token sent twice, the right one first: a repeated header is never read as its first value", async () => {
    const { port } = new URL(server.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: "127.0.0.1", port: Number(port) }, () =>
        socket.write(`GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${metricsToken}\r\nAuthorization: Bearer wrong-token-0123456789\r\nConnection: close\r\n\r\n`),
      );
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    assert.match(answer, /^HTTP\/1\.1 401 /);
  });

  it("answers only GET and HEAD", async () => {
    const res = await fetch(`${server.url}/metrics`, { method: "POST", headers: { authorization: `Bearer ${metricsToken}` } });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
  });

  it("is served outside BASE_PATH, not under it", async () => {
    const res = await fetch(`${server.restUrl}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    assert.equal(res.status, 404);
  });
});

describe("GET /metrics without METRICS_TOKEN", () => {
  it("is open, and each app counts into its own registry", async () => {
    const first = await startMetricsServer();
    const second = await startMetricsServer();
    try {
      expectJson(await createRestClient(first.server).createIntent({ amount: 1, customerEmail: "a@b.ng", clientReference: "own-1" }), 201);
      const res = await fetch(`${first.server.url}/metrics`);
      assert.equal(res.status, 200);
      assert.equal(valueOf(await res.text(), "payments_intents_created_total"), 1);
      assert.equal(valueOf(await second.metrics.registry.metrics(), "payments_intents_created_total"), 0);
    } finally {
      await first.server.close();
      await second.server.close();
    }
  });
});

describe("createServiceMetrics", () => {
  it("collects process and Node.js metrics into its registry when asked to", async () => {
    const text = await createServiceMetrics({ processMetrics: true }).registry.metrics();
    for (const name of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds", "nodejs_heap_size_used_bytes"]) {
      assert.match(text, new RegExp(`^${name} `, "m"), name);
    }
    assert.doesNotMatch(await createServiceMetrics().registry.metrics(), /^process_cpu_user_seconds_total /m);
  });
});

describe("instrumentStore", () => {
  it("times calls that fail as errors and passes the error and results through unchanged", async () => {
    const calls: unknown[][] = [];
    const store = {
      base: 40,
      async add(n: number) {
        return this.base + n;
      },
      async fail() {
        throw new Error("database is down");
      },
      syncValue() {
        return "sync";
      },
    };
    const timed = instrumentStore(store, "test_store", {
      storeTimer: (storeName, operation) => (seconds, ok) => void calls.push([storeName, operation, seconds, ok]),
    });
    assert.equal(await timed.add(2), 42);
    await assert.rejects(timed.fail(), /database is down/);
    assert.equal(timed.syncValue(), "sync");
    assert.equal(timed.base, 40);
    assert.deepEqual(
      calls.map(([store, operation, seconds, ok]) => [store, operation, typeof seconds, ok]),
      [
        ["test_store", "add", "number", true],
        ["test_store", "fail", "number", false],
        ["test_store", "syncValue", "number", true],
      ],
    );
  });
});
