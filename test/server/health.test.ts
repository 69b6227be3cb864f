import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/health/v1/health_pb.js";
import { createSystemClock } from "../../src/lib/clock.js";
import { createOperations } from "../../src/server/operations.js";
import { createReadiness, type Readiness } from "../../src/server/readiness.js";
import { expectConnectError } from "../rpc/support/rpc-helpers.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** A store whose reachability the test switches. */
function switchableStore() {
  const store = {
    reachable: true,
    async ping() {
      if (!store.reachable) throw new Error("connect ECONNREFUSED");
    },
  };
  return store;
}

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
    // cacheMs 0: every check asks the store, so the switch shows at once.
    readiness = createReadiness({ store, clock: createSystemClock(), timeoutMs: 500, cacheMs: 0 });
    const operations = createOperations(readiness);
    server = await startTestServer({ app: operations });
    health = createClient(Health, createGrpcTransport({ baseUrl: server.url }));
  });
  after(() => server.close());

  const ok = (message: string) => JSON.stringify({ status: 200, title: "OK", message });

  it("GET /healthz and /readyz answer 200 without a key, outside BASE_PATH", async () => {
    for (const [path, message] of [["/healthz", "alive"], ["/readyz", "ready"]] as const) {
      const res = await getJson(`${server.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.text, ok(message));
      assert.equal(res.headers.get("content-type"), "application/json");
      assert.equal(res.headers.get("cache-control"), "no-store");
    }
    // Under BASE_PATH they are ordinary unknown API paths.
    assert.equal((await getJson(`${server.restUrl}/healthz`)).status, 404);
  });

  it("answers HEAD without a body and refuses other methods with 405 and Allow", async () => {
    const head = await fetch(`${server.url}/readyz`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("content-length"), String(Buffer.byteLength(ok("ready"))));
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
    for (const service of ["", "payments.v2.PaymentIntentService", "payments.v2.SettlementAccountService"]) {
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
    assert.deepEqual(Object.keys(statuses).sort(), ["", "payments.v2.PaymentIntentService", "payments.v2.SettlementAccountService"]);
  });

  it("turns /readyz 503 and gRPC NOT_SERVING while the store is unreachable; /healthz stays 200", async () => {
    store.reachable = false;
    try {
      const ready = await getJson(`${server.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(JSON.parse(ready.text), { status: 503, title: "Service Unavailable", message: "the store is unreachable" });
      assert.equal((await health.check({ service: "" })).status, HealthCheckResponse_ServingStatus.NOT_SERVING);
      assert.equal((await getJson(`${server.url}/healthz`)).status, 200);
    } finally {
      store.reachable = true;
    }
    assert.equal((await getJson(`${server.url}/readyz`)).status, 200);
  });

  // Last: shutdown is for good.
  it("turns /readyz 503 and gRPC NOT_SERVING once shutdown begins", async () => {
    readiness.beginShutdown();
    const ready = await getJson(`${server.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.deepEqual(JSON.parse(ready.text), { status: 503, title: "Service Unavailable", message: "the server is shutting down" });
    assert.equal((await health.check({ service: "payments.v2.PaymentIntentService" })).status, HealthCheckResponse_ServingStatus.NOT_SERVING);
    assert.equal((await getJson(`${server.url}/healthz`)).status, 200);
  });
});
