import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { startServerProcess, type ServerProcess } from "../support/server-process.js";
import { valueOf } from "./support/prometheus-text.js";

const key = "sk_test_observability_0123456789";
const metricsToken = "scrape-token-0123456789abcdef";

describe("npm start: request logs and metrics", () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServerProcess({ apiKeys: `acme:${key}`, env: { METRICS_TOKEN: metricsToken, LOG_LEVEL: "debug" } });
  });
  after(() => server.stop());

  const create = (reference: string, requestId: string) =>
    fetch(`${server.url}/v1/v2/payment-intents`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify({ amount: 100, customerEmail: "ada@example.com", clientReference: reference }),
    });

  it("logs one JSON line per request on stderr, with the request id it echoes", async () => {
    const res = await create("process-1", "process-request-1");
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("x-request-id"), "process-request-1");
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && !line; i++) {
      line = server
        .stderr()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l["requestId"] === "process-request-1");
      if (!line) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(line, server.stderr());
    assert.equal(line["route"], "/v2/payment-intents");
    assert.equal(line["merchantId"], "acme");
    assert.ok(!server.stderr().includes(key), "the key reached the log");
    assert.ok(!server.stderr().includes("ada@example.com"), "an email reached the log");
  });

  it("serves /metrics behind METRICS_TOKEN with requests, creations, store calls and process metrics", async () => {
    assert.equal((await fetch(`${server.url}/metrics`)).status, 401);
    assert.equal((await create("process-2", "process-request-2")).status, 201);
    assert.equal((await create("process-2", "process-request-3")).status, 200);
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(valueOf(text, "payments_requests_total", { protocol: "rest", route: "/v2/payment-intents", status: "201", code: "" }) >= 2);
    assert.equal(valueOf(text, "payments_requests_total", { protocol: "rest", route: "/v2/payment-intents", status: "200", code: "" }), 1);
    assert.equal(valueOf(text, "payments_intents_created_total"), 2);
    assert.ok(valueOf(text, "payments_store_call_duration_seconds_count", { store: "payment_intents", operation: "insert", outcome: "ok" }) >= 2);
    assert.ok(valueOf(text, "payments_store_call_duration_seconds_count", { store: "api_keys", operation: "verify", outcome: "ok" }) >= 3);
    assert.match(text, /^process_cpu_user_seconds_total /m);
  });
});

describe("npm start: the asynchronous log at shutdown", () => {
  it("writes every request's line before the process exits on SIGTERM", async () => {
    const server = await startServerProcess({ apiKeys: `acme:${key}` });
    const count = 300;
    // Many lines in flight at once, then SIGTERM as soon as the last answer is in.
    const statuses = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        fetch(`${server.url}/v1/v2/settlement-accounts`, {
          headers: { authorization: `Bearer ${key}`, "x-request-id": `flush-${i}` },
        }).then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        }),
      ),
    );
    assert.deepEqual(new Set(statuses), new Set([200]));
    server.child.kill("SIGTERM");
    assert.equal(await server.exited, "0");
    const lines = server
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const logged = new Set(lines.filter((l) => l["msg"] === "request").map((l) => l["requestId"]));
    for (let i = 0; i < count; i++) assert.ok(logged.has(`flush-${i}`), `request flush-${i} has no log line`);
    assert.equal(lines.at(-1)?.["msg"], "stopped");
  });
});

describe("npm start: what the listener answers itself", () => {
  it("logs a request without Host as route (refused) with its reason, and counts it", async () => {
    const server = await startServerProcess({ apiKeys: `acme:${key}`, env: { METRICS_TOKEN: metricsToken } });
    try {
      const { port } = new URL(server.url);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect({ host: "127.0.0.1", port: Number(port) }, () => socket.write("GET /healthz HTTP/1.1\r\n\r\n"));
        let text = "";
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
      });
      assert.match(answer, /^HTTP\/1\.1 400 /);
      const requestId = /^x-request-id: (\S+)/im.exec(answer)?.[1];
      assert.ok(requestId, answer);
      let line: Record<string, unknown> | undefined;
      for (let i = 0; i < 100 && !line; i++) {
        line = server
          .stderr()
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l["requestId"] === requestId);
        if (!line) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.ok(line, server.stderr());
      assert.deepEqual([line["msg"], line["route"], line["status"], line["protocol"], typeof line["reason"]], ["request", "(refused)", 400, "http", "string"]);
      const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
      assert.equal(valueOf(metrics, "payments_requests_total", { protocol: "http", route: "(refused)", status: "400", code: "" }), 1);
    } finally {
      await server.stop();
    }
  });
});
