import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { afterEach, describe, it } from "node:test";
import { createDeliveryEngine } from "../../src/webhooks/delivery-engine.js";
import { createRetryPolicy, parseRetrySchedule } from "../../src/webhooks/retry-policy.js";
import { generateWebhookSecret } from "../../src/webhooks/signing.js";
import { createWebhookSender } from "../../src/webhooks/webhook-sender.js";
import { sleep, startEngineHarness, verifyDelivery, type EngineHarness } from "./support/engine-harness.js";
import { createReceivers, waitUntil } from "./support/receiver.js";

describe("createDeliveryEngine under load and failure", () => {
  let h: EngineHarness | undefined;
  const receivers = createReceivers();
  const receiver = receivers.start;
  afterEach(async () => {
    await h?.engine.stop();
    h = undefined;
    await receivers.closeAll();
  });

  it("keeps a dead endpoint to its per-endpoint slots: a healthy endpoint is served at once", async () => {
    h = startEngineHarness({ timeoutMs: 5000, engine: { concurrency: 8, perEndpointConcurrency: 2, graceMs: 100 } });
    const dead = await receiver(() => "hang");
    const healthy = await receiver();
    const deadEndpoint = h.endpoint(dead.url);
    const healthyEndpoint = h.endpoint(healthy.url);
    for (let i = 0; i < 50; i++) h.deliver(deadEndpoint.id);
    await waitUntil(() => dead.open() === 2, "the dead endpoint holds its 2 slots");

    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      h.deliver(healthyEndpoint.id);
      const got = await healthy.nth(i + 1, 3000);
      latencies.push(got.at - started);
      verifyDelivery(healthyEndpoint.secret, got);
    }
    const worst = Math.max(...latencies);
    assert.ok(worst < 1000, `healthy deliveries took ${latencies.map((l) => l.toFixed(0)).join(", ")} ms with 50 pending for a dead endpoint`);
    assert.equal(dead.maxOpen(), 2, "never more than the per-endpoint limit at the dead endpoint");
    assert.equal(dead.received.length, 2);

    // Stopping cuts the two hung attempts after the grace and gives their leases back: still pending, no attempt.
    const stopping = performance.now();
    await h.engine.stop();
    assert.ok(performance.now() - stopping < 2000, "stop() does not wait for the 5 s timeout");
    const pending = h.queue.deliveries().filter((d) => d.endpointId === deadEndpoint.id);
    assert.ok(pending.every((d) => d.status === "pending" && d.attempts.length === 0 && d.lease === null));
    process.stdout.write(`# healthy-endpoint latency with a dead endpoint backlogged: ${latencies.map((l) => l.toFixed(1)).join(", ")} ms\n`);
  });

  it("retries a delivery claimed by an instance that died, once its lease runs out", async () => {
    h = startEngineHarness();
    const r = await receiver();
    const endpoint = h.endpoint(r.url);
    await h.engine.stop();
    const { deliveryId } = h.deliver(endpoint.id);
    const [crashed] = await h.queue.claim({ now: h.clock.now(), owner: "crashed", leaseMs: 400, limit: 1, perEndpointLimit: 4 });
    assert.equal(crashed!.deliveryId, deliveryId);

    const claimedAt = performance.now();
    h.engine.start();
    await sleep(200);
    assert.equal(r.received.length, 0, "not while the dead instance's lease runs");
    const got = await r.nth(1, 3000);
    const after = got.at - claimedAt;
    assert.ok(after >= 390 && after < 1500, `sent ${after.toFixed(0)} ms after the 400 ms lease was taken`);
    verifyDelivery(endpoint.secret, got);
    await waitUntil(() => h!.queue.delivery(deliveryId)!.status === "succeeded", "the delivery succeeded");
    const late = await h.queue.complete({
      lease: crashed!.lease,
      attempt: { at: h.clock.now(), statusCode: 200, durationMs: 1, error: null },
      next: { status: "succeeded" },
      endpoint: { kind: "succeeded" },
    });
    assert.deepEqual(late, { recorded: false });
    assert.equal(h.queue.delivery(deliveryId)!.attempts.length, 1);
  });

  it("shares one queue between two engines: each delivery sent once, per-endpoint limits held across both", async () => {
    h = startEngineHarness({ engine: { concurrency: 4, perEndpointConcurrency: 2 } });
    const second = createDeliveryEngine({
      queue: h.queue,
      sender: createWebhookSender({ timeoutMs: 2000, allowPrivate: true }),
      policy: createRetryPolicy({ schedule: parseRetrySchedule("5s") }),
      clock: h.clock,
      logger: h.logs.logger,
      concurrency: 4,
      perEndpointConcurrency: 2,
      pollIntervalMs: 50,
      instanceId: "second",
    });
    second.start();
    try {
      const rs = await Promise.all([1, 2, 3].map(() => receiver(() => ({ status: 200, delayMs: 20 }))));
      const endpoints = rs.map((r) => h!.endpoint(r.url));
      const sent = new Set<string>();
      for (let i = 0; i < 45; i++) sent.add(h.deliver(endpoints[i % 3]!.id).eventId);
      second.wake();
      await waitUntil(() => h!.queue.deliveries().every((d) => d.status === "succeeded"), "all 45 delivered", 10_000);
      const ids = rs.flatMap((r) => r.received.map((got) => String(got.headers["webhook-id"])));
      assert.equal(ids.length, 45, "each delivery sent exactly once");
      assert.deepEqual(new Set(ids), sent);
      for (const r of rs) assert.ok(r.maxOpen() <= 2, `at most 2 at once per endpoint across both engines, saw ${r.maxOpen()}`);
      const logged = h.logs.lines().filter((l) => l["msg"] === "webhook attempt").map((l) => l["deliveryId"]);
      assert.equal(logged.length, 45, "one attempt line per delivery, from whichever engine sent it");
      assert.equal(new Set(logged).size, 45);
    } finally {
      await second.stop();
    }
  });

  it("lets attempts in flight finish when stopped within the grace", async () => {
    h = startEngineHarness({ engine: { graceMs: 5000 } });
    const r = await receiver(() => ({ status: 200, delayMs: 300 }));
    const { deliveryId } = h.deliver(h.endpoint(r.url).id);
    await r.nth(1);
    await h.engine.stop();
    assert.equal(h.queue.delivery(deliveryId)!.status, "succeeded", "stop() waited for the answer and recorded it");
    h.deliver(h.endpoint(r.url).id);
    await sleep(200);
    assert.equal(r.received.length, 1, "a stopped engine claims nothing");
  });

  it("logs one line per attempt with ids, status, duration and outcome, never the body, a secret, a signature or the URL", async () => {
    // A timeout long enough that a loaded machine never turns the 500 or the 200 into one.
    h = startEngineHarness({ timeoutMs: 1000 });
    const marker = `customer-${randomUUID()}@example.com`;
    const r = await receiver((_, index) => (index === 0 ? { status: 500 } : index === 1 ? "hang" : { status: 200 }));
    const secret = generateWebhookSecret();
    const endpoint = h.endpoint(`${r.url}?token=url-credential-${randomUUID()}`, [{ secret, expiresAt: null }]);
    const { deliveryId, eventId } = h.deliver(endpoint.id, { customerEmail: marker, note: "private note" });
    for (const count of [1, 2, 3]) {
      await waitUntil(() => h!.queue.delivery(deliveryId)!.attempts.length === count, `attempt ${count} recorded`);
      h.clock.advance(count === 1 ? 5000 : 300_000);
    }
    const lines = h.logs.lines().filter((l) => l["msg"] === "webhook attempt");
    assert.deepEqual(
      lines.map((l) => [l["attempt"], l["statusCode"], l["outcome"], l["deliveryStatus"]]),
      [
        [1, 500, "http-error", "pending"],
        [2, null, "timeout", "pending"],
        [3, 200, "success", "succeeded"],
      ],
    );
    const first = lines[0]!;
    assert.deepEqual(
      Object.keys(first).filter((k) => !["level", "time", "pid", "hostname", "msg"].includes(k)).sort(),
      ["attempt", "deliveryId", "deliveryStatus", "durationMs", "endpointId", "error", "eventId", "nextAttemptAt", "outcome", "statusCode"],
    );
    assert.deepEqual([first["eventId"], first["deliveryId"], first["endpointId"]], [eventId, deliveryId, endpoint.id]);
    assert.equal(typeof first["durationMs"], "number");
    assert.equal(first["nextAttemptAt"], new Date(Date.parse("2026-06-01T00:00:00.000Z") + 5000).toISOString());
    const text = h.logs.text();
    const signature = String(r.received[0]!.headers["webhook-signature"]);
    for (const forbidden of [marker, "private note", secret, secret.slice(6), signature.slice(3), "url-credential", r.url]) {
      assert.ok(!text.includes(forbidden), `the log holds ${forbidden}`);
    }
  });

  it("reports the queue's depth to its metrics", async () => {
    h = startEngineHarness({ engine: { statsIntervalMs: 50 } });
    const r = await receiver(() => ({ status: 500 }));
    const endpoint = h.endpoint(r.url);
    h.deliver(endpoint.id);
    h.deliver(endpoint.id);
    await waitUntil(() => h!.queue.deliveries().every((d) => d.attempts.length === 1), "both attempted");
    const before = h.metrics.queues.length;
    await waitUntil(() => h!.metrics.queues.length > before + 1, "the gauges are refreshed");
    assert.deepEqual(h.metrics.queues.at(-1), { pending: 2, due: 0, oldestPendingCreatedAt: new Date("2026-06-01T00:00:00.000Z") });
  });
});
