import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { createMemoryApiKeyVerifier } from "../../src/auth/memory-api-key-verifier.js";
import type { HttpRoute } from "../../src/http/http-route.js";
import type { StoreHealth, StoreState } from "../../src/store/store-health.js";
import { haproxyConfigPath, haproxyMissing, startDeployedHaproxy, type DeployedHaproxy } from "../../drills/support/deployed-haproxy.js";
import { expectConnectError } from "../rpc/support/rpc-helpers.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const skip = haproxyMissing();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const key = `sk_test_${randomBytes(18).toString("base64url")}`;

/** A store whose reachability the test switches: unreachable past the grace makes the instance not ready, and back. */
function switchableStore() {
  const healthy: StoreState = { kind: "postgres", reachable: true, since: undefined, unreachableForMs: 0, pendingMigrations: [] };
  const store = {
    current: healthy,
    setReady(ready: boolean) {
      store.current = ready ? healthy : { ...healthy, reachable: false, unreachableForMs: 60_000 };
    },
    state: () => store.current,
    probe: async () => {},
  };
  return store satisfies StoreHealth;
}

/** A route whose instance dies mid-request: the socket closes before any answer. */
const dropRoute: HttpRoute = {
  name: "/drop",
  methods: ["POST"],
  matches: (path) => path === "/drop",
  handle: (req) => void req.socket.destroy(),
};

/** A create-shaped path (…/v2/payment-intents) that the first instance drops and the others answer. */
const flakyCreateRoute = (index: number): HttpRoute => ({
  name: "/flaky/v2/payment-intents",
  methods: ["POST"],
  matches: (path) => path === "/flaky/v2/payment-intents",
  handle(req, res) {
    if (index === 0) return void req.socket.destroy();
    res.writeHead(201, { "content-type": "application/json" });
    res.end(JSON.stringify({ servedBy: index }));
  },
});

/** One POST on a connection of its own (HAProxy answers a failed first request of a connection with its error). */
function postOnNewConnection(url: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": 2 } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end("{}");
  });
}

interface Instance {
  server: TestServer;
  store: ReturnType<typeof switchableStore>;
  /** API requests this instance served (probes not counted). */
  served: number;
}

async function startInstance(index: number): Promise<Instance> {
  const store = switchableStore();
  const instance: Instance = { server: undefined as unknown as TestServer, store, served: 0 };
  const verifier = createMemoryApiKeyVerifier([{ merchantId: "merchantA", merchantName: "A", key }]);
  instance.server = await startTestServer({
    store: "memory",
    // deploy/haproxy.cfg sends the PROXY protocol (send-proxy-v2): trust it from here, as an instance trusts its balancer.
    settings: { TRUSTED_PROXIES: "127.0.0.1" },
    wrapStores: (stores) => ({ ...stores, health: store, verifier }),
    httpRoutes: [dropRoute, flakyCreateRoute(index)],
    onRequestEnd: (outcome) => {
      if (outcome.route !== "/readyz") instance.served++;
    },
  });
  return instance;
}

describe("deploy/haproxy.cfg, run unchanged in front of three instances", { skip, timeout: 120_000 }, () => {
  let instances: Instance[];
  let haproxy: DeployedHaproxy;
  const auth = { authorization: `Bearer ${key}` };

  /** Waits until HAProxy's health checks see exactly the given servers of api_http as UP. */
  async function waitForUp(up: string[], timeoutMs = 8000): Promise<void> {
    const started = performance.now();
    let seen: string[] = [];
    while (performance.now() - started < timeoutMs) {
      // "UP 1/2" is going down but still in service; "DOWN 1/2" is coming up but not yet.
      seen = (await haproxy.stats()).filter((s) => s.backend === "api_http" && s.status.startsWith("UP")).map((s) => s.server);
      if (seen.join() === up.join()) return;
      await sleep(100);
    }
    assert.fail(`api_http UP: ${seen.join(", ")}; expected ${up.join(", ")}`);
  }

  before(async () => {
    instances = await Promise.all([0, 1, 2].map(startInstance));
    haproxy = await startDeployedHaproxy(instances.map((i) => `127.0.0.1:${i.server.port}`));
    await waitForUp(["api1", "api2", "api3"]);
  });
  after(async () => {
    await haproxy?.stop();
    await Promise.all((instances ?? []).map((i) => i.server.close()));
  });

  it("is a valid configuration as committed, with its defaults", () => {
    const check = spawnSync("haproxy", ["-c", "-f", haproxyConfigPath], { encoding: "utf8" });
    assert.equal(check.status, 0, check.stderr);
  });

  it("balances REST over every instance, and gRPC per call over one client connection", async () => {
    for (const i of instances) i.served = 0;
    for (let n = 0; n < 9; n++) {
      const res = await fetch(`${haproxy.httpUrl}/v1/v2/payment-intents`, { headers: auth });
      assert.equal(res.status, 200, await res.text());
    }
    assert.deepEqual(instances.map((i) => i.served), [3, 3, 3]);

    for (const i of instances) i.served = 0;
    const client = createClient(PaymentIntentService, createGrpcTransport({ baseUrl: haproxy.grpcUrl }));
    for (let n = 0; n < 9; n++) assert.deepEqual((await client.listPaymentIntents({}, { headers: auth })).paymentIntents, []);
    assert.deepEqual(instances.map((i) => i.served), [3, 3, 3]);
  });

  it("takes out an instance whose /readyz is 503, and answers in the API's JSON when no instance is ready", async () => {
    instances[2]!.store.setReady(false);
    await waitForUp(["api1", "api2"]);
    for (const i of instances) i.served = 0;
    for (let n = 0; n < 6; n++) assert.equal((await fetch(`${haproxy.httpUrl}/v1/v2/payment-intents`, { headers: auth })).status, 200);
    assert.deepEqual(instances.map((i) => i.served), [3, 3, 0]);

    for (const i of instances) i.store.setReady(false);
    try {
      await waitForUp([]);
      const res = await fetch(`${haproxy.httpUrl}/v1/v2/payment-intents`, { headers: auth });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("content-type"), "application/json");
      assert.equal(res.headers.get("retry-after"), "1");
      assert.deepEqual(await res.json(), { status: 503, title: "Service Unavailable", message: "no instance can serve the request now (every one is down, or busy past the queue timeout); retry later" });
      const client = createClient(PaymentIntentService, createGrpcTransport({ baseUrl: haproxy.grpcUrl }));
      await expectConnectError(client.listPaymentIntents({}, { headers: auth }), Code.Unavailable);
    } finally {
      for (const i of instances) i.store.setReady(true);
    }
    await waitForUp(["api1", "api2", "api3"]);
  });

  it("answers 502 in the API's JSON, never a reset, when an instance dies with a write in flight", async () => {
    const res = await postOnNewConnection(`${haproxy.httpUrl}/drop`);
    assert.equal(res.status, 502);
    assert.equal(res.headers["retry-after"], "1");
    assert.equal(res.headers["content-type"], "application/json");
    assert.deepEqual(JSON.parse(res.body), {
      status: 502,
      title: "Bad Gateway",
      message: "the instance serving the request stopped before answering, so it may or may not have been carried out; retry the same request: it is safe",
    });
  });

  it("replays a create (idempotent by clientReference) on another instance when its instance dies, on kept-alive connections too", async () => {
    const answers = [];
    for (let n = 0; n < 6; n++) {
      const res = await fetch(`${haproxy.httpUrl}/flaky/v2/payment-intents`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      answers.push([res.status, ((await res.json()) as { servedBy: number }).servedBy]);
    }
    assert.ok(answers.every(([status, by]) => status === 201 && by !== 0), JSON.stringify(answers));
    const api1 = (await haproxy.stats()).find((s) => s.backend === "api_http" && s.server === "api1")!;
    assert.ok(api1.redispatches + api1.retries > 0, JSON.stringify(api1));
  });

  // Last: it closes an instance for good.
  it("sends a request an instance refused to another instance (option redispatch) before any health check notices", async () => {
    const gone = instances[1]!;
    await gone.server.close({ graceMs: 0 });
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async () => (await fetch(`${haproxy.httpUrl}/v1/v2/payment-intents`, { headers: auth })).status),
    );
    assert.deepEqual(statuses, Array(12).fill(200));
    const api2 = (await haproxy.stats()).find((s) => s.backend === "api_http" && s.server === "api2")!;
    assert.ok(api2.redispatches + api2.retries > 0 || /DOWN/.test(api2.status), JSON.stringify(api2));
  });
});
