import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/health/v1/health_pb.js";
import { type Readiness } from "../../src/observability/readiness.js";
import type { StoreHealth, StoreState } from "../../src/store/store-health.js";
import { expectConnectError } from "../rpc/support/rpc-helpers.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const healthyState: StoreState = { kind: "postgres", reachable: true, since: undefined, unreachableForMs: 0, pendingMigrations: [] };

/** A store whose state the test switches. */
function switchableStore() {
  const store = {
    current: healthyState,
    state: () => store.current,
    probe: async () => {},
  };
  return store satisfies StoreHealth;
}

/** The /readyz body of a ready instance on that store. */
/** What the service adds to every detail: its limits' backend and the test helpers' switches. */
const serviceDetail = { rateLimits: { backend: "memory" }, testHelpers: false, testClock: false };
/** The readiness grace of a service without DB_UNREADY_AFTER_MS. */
const unreachableGraceMs = 30_000;
const readyBody = (store: StoreState = healthyState) =>
  JSON.stringify({
    status: 200,
    title: "OK",
    message: "ready",
    detail: { ...serviceDetail, state: "ready", store: { ...store, notReadyAfterMs: unreachableGraceMs } },
  });

async function getJson(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe("health probes and gRPC health", () => {
  let server: TestServer;
  let store: ReturnType<typeof switchableStore>;
  let readiness: Readiness;
  let health: ReturnType<typeof createClient<typeof Health>>;

  before(async () => {
    store = switchableStore();
    // The readiness rules over a store whose health the test switches: the same on either store kind, so on memory.
    server = await startTestServer({ store: "memory", wrapStores: (stores) => ({ ...stores, health: store }) });
    readiness = server.service.readiness;
    health = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
  });
  after(() => server.close());

  const ok = (message: string) => JSON.stringify({ status: 200, title: "OK", message });

  it("GET /healthz and /readyz answer 200 without a key, outside BASE_PATH", async () => {
    for (const [path, body] of [["/healthz", ok("alive")], ["/readyz", readyBody()]] as const) {
      const res = await getJson(`${server.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.text, body);
      assert.equal(res.headers.get("content-type"), "application/json");
      assert.equal(res.headers.get("cache-control"), "no-store");
    }
    // Under BASE_PATH they are ordinary unknown API paths.
    assert.equal((await getJson(`${server.restUrl}/healthz`)).status, 404);
  });

  it("answers HEAD without a body and refuses other methods with 405 and Allow", async () => {
    const head = await fetch(`${server.url}/readyz`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("content-length"), String(Buffer.byteLength(readyBody())));
    assert.equal(await head.text(), "");
    const post = await getJson(`${server.url}/healthz`, { method: "POST" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD");
    assert.deepEqual(JSON.parse(post.text), { status: 405, title: "Method Not Allowed", message: "POST is not allowed on /healthz" });
  });

  it("serves the probes over h2c too", async () => {
    const session = http2.connect(server.url);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ":path": "/readyz" });
        stream.on("response", (headers) => resolve(Number(headers[":status"])));
        stream.on("error", reject);
        stream.resume();
      });
      assert.equal(status, 200);
    } finally {
      session.close();
    }
  });

  it("gRPC Check answers SERVING for the server and each API service, without a key", async () => {
    for (const service of [
      "",
      "payments.v2.EventService",
      "payments.v2.PaymentIntentService",
      "payments.v2.RefundService",
      "payments.v2.SettlementAccountService",
      "payments.v2.WebhookEndpointService",
    ]) {
      assert.equal((await health.check({ service })).status, HealthCheckResponse_ServingStatus.SERVING, service);
    }
  });

  it("gRPC Check answers NotFound for an unknown service, and Watch is Unimplemented", async () => {
    await expectConnectError(health.check({ service: "payments.v2.Nope" }), Code.NotFound, "unknown service payments.v2.Nope");
    await expectConnectError(
      (async () => {
        for await (const _ of health.watch({ service: "" })) assert.fail("Watch sent a message");
      })(),
      Code.Unimplemented,
    );
  });

  it("gRPC List reports every known service", async () => {
    const { statuses } = await health.list({});
    assert.deepEqual(Object.keys(statuses).sort(), [
      "",
      "payments.v2.EventService",
      "payments.v2.PaymentIntentService",
      "payments.v2.RefundService",
      "payments.v2.SettlementAccountService",
      "payments.v2.WebhookEndpointService",
    ]);
  });

  it("stays 200 and SERVING while the store is unreachable within the grace, showing it in the detail", async () => {
    const failing = { ...healthyState, reachable: false, unreachableForMs: unreachableGraceMs, lastFailure: { reason: "the connection failed (ECONNREFUSED)", at: new Date(0) } };
    store.current = failing;
    try {
      const ready = await getJson(`${server.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal(ready.text, readyBody(failing));
      assert.equal((await health.check({ service: "" })).status, HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      store.current = healthyState;
    }
  });

  it("turns /readyz 503 and gRPC NOT_SERVING once the store is unreachable past the grace; /healthz stays 200", async () => {
    store.current = { ...healthyState, reachable: false, since: new Date("2026-11-23T10:00:00.000Z"), unreachableForMs: unreachableGraceMs + 1 };
    try {
      const ready = await getJson(`${server.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(JSON.parse(ready.text), {
        status: 503,
        title: "Service Unavailable",
        message: "the store has been unreachable for longer than 30 s",
        detail: { ...serviceDetail, state: "store unreachable", store: { ...JSON.parse(JSON.stringify(store.current)), notReadyAfterMs: unreachableGraceMs } },
      });
      assert.equal((await health.check({ service: "" })).status, HealthCheckResponse_ServingStatus.NOT_SERVING);
      assert.equal((await getJson(`${server.url}/healthz`)).status, 200);
    } finally {
      store.current = healthyState;
    }
    assert.equal((await getJson(`${server.url}/readyz`)).status, 200);
  });

  it("turns /readyz 503 and gRPC NOT_SERVING while migrations are pending", async () => {
    store.current = { ...healthyState, pendingMigrations: ["Migration20261123000000_methods_array"] };
    try {
      const ready = await getJson(`${server.url}/readyz`);
      assert.equal(ready.status, 503);
      const body = JSON.parse(ready.text) as { message: string; detail: { state: string } };
      assert.equal(body.message, "database migrations are pending: apply them (npm run db:migrate)");
      assert.equal(body.detail.state, "migrations pending");
      assert.equal((await health.check({ service: "" })).status, HealthCheckResponse_ServingStatus.NOT_SERVING);
    } finally {
      store.current = healthyState;
    }
  });

  it("shows the detail only to a request bearing METRICS_TOKEN when one is set", async () => {
    const token = "metrics-token-0123456789";
    const guarded = await startTestServer({ settings: { METRICS_TOKEN: token } });
    try {
      const open = await getJson(`${guarded.url}/readyz`);
      assert.equal(open.status, 200);
      assert.equal(open.text, ok("ready"));
      for (const authorization of [`Bearer ${token}`, `bearer ${token}`]) {
        const bearing = await getJson(`${guarded.url}/readyz`, { headers: { authorization } });
        assert.equal((JSON.parse(bearing.text) as { detail?: { state: string } }).detail?.state, "ready", authorization);
      }
      const wrong = await getJson(`${guarded.url}/readyz`, { headers: { authorization: `Bearer ${token}x` } });
      assert.equal(wrong.text, ok("ready"));
    } finally {
      await guarded.close();
    }
  });

  // Last: shutdown is for good.
  it("turns /readyz 503 and gRPC NOT_SERVING once shutdown begins", async () => {
    readiness.beginShutdown();
    const ready = await getJson(`${server.url}/readyz`);
    assert.equal(ready.status, 503);
    const body = JSON.parse(ready.text) as { status: number; title: string; message: string; detail: { state: string } };
    assert.deepEqual([body.status, body.title, body.message, body.detail.state], [503, "Service Unavailable", "the server is shutting down", "draining"]);
    assert.equal((await health.check({ service: "payments.v2.PaymentIntentService" })).status, HealthCheckResponse_ServingStatus.NOT_SERVING);
    assert.equal((await getJson(`${server.url}/healthz`)).status, 200);
  });
});
