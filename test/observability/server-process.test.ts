import assert from "node:assert/strict";
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
