import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { notPublicMessage } from "../../src/webhooks/endpoint-url.js";
import { WebhookVerificationError } from "standardwebhooks";
import { generateWebhookSecret } from "../../src/webhooks/signing.js";
import { rotateSigningSecrets } from "../../src/domain/signing-secrets.js";
import { createWebhookSender } from "../../src/webhooks/webhook-sender.js";
import { sleep, startEngineHarness, verifyDelivery, type EngineHarness } from "./support/engine-harness.js";
import { createReceivers, waitUntil } from "./support/receiver.js";

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

describe("createDeliveryEngine", () => {
  let h: EngineHarness;
  const receivers = createReceivers();
  const receiver = receivers.start;
  afterEach(async () => {
    await h?.engine.stop();
    await receivers.closeAll();
  });

  it("delivers an event signed as standardwebhooks verifies, and records the attempt", async () => {
    h = startEngineHarness();
    const r = await receiver();
    const endpoint = h.endpoint(r.url);
    const { deliveryId, eventId, body } = h.deliver(endpoint.id, { amount: "50000" });
    const got = await r.nth(1);
    assert.deepEqual(verifyDelivery(endpoint.secret, got), JSON.parse(body));
    assert.equal(got.headers["webhook-id"], eventId);
    assert.equal(got.headers["content-type"], "application/json");
    assert.ok(Math.abs(Number(got.headers["webhook-timestamp"]) - Date.now() / 1000) < 5, "webhook-timestamp is real time");
    await waitUntil(() => h.queue.delivery(deliveryId)!.status === "succeeded", "the delivery succeeded");
    const delivery = h.queue.delivery(deliveryId)!;
    assert.equal(delivery.attempts.length, 1);
    const [attempt] = delivery.attempts;
    assert.deepEqual({ ...attempt!, durationMs: 0 }, { at: h.clock.now(), statusCode: 200, durationMs: 0, error: null });
    assert.equal(delivery.nextAttemptAt, null);
    assert.deepEqual(h.metrics.attempts.map((a) => a.outcome), ["success"]);
    assert.deepEqual(h.metrics.deliveries, [{ outcome: "succeeded", seconds: 0 }]);
    assert.equal(r.received.length, 1);
  });

  it("records one sentence for a refused host; the address and its class go to the operator's log only", async () => {
    h = startEngineHarness({ engine: { sender: createWebhookSender({ timeoutMs: 2000, allowPrivate: false }) } });
    const r = await receiver();
    const endpoint = h.endpoint(r.url);
    const { deliveryId } = h.deliver(endpoint.id);
    await waitUntil(() => h.queue.delivery(deliveryId)!.attempts.length === 1, "the refused attempt is recorded");
    const [attempt] = h.queue.delivery(deliveryId)!.attempts;
    assert.deepEqual(
      { statusCode: attempt!.statusCode, error: attempt!.error },
      { statusCode: null, error: notPublicMessage() },
    );
    const line = h.logs.lines().find((l) => l["msg"] === "webhook attempt" && l["deliveryId"] === deliveryId);
    assert.equal(line?.["detail"], "the host resolves to 127.0.0.1, a loopback address");
    assert.equal(r.received.length, 0);
  });

  it("retries a 500 after the schedule's delay on the injected clock", async () => {
    h = startEngineHarness({ engine: { pollIntervalMs: 200 } });
    const r = await receiver((_, index) => ({ status: index === 0 ? 500 : 204 }));
    const endpoint = h.endpoint(r.url);
    const { deliveryId } = h.deliver(endpoint.id);
    await r.nth(1);
    await waitUntil(() => h.queue.delivery(deliveryId)!.attempts.length === 1, "the first attempt is recorded");
    const started = h.clock.now().getTime();
    assert.deepEqual(h.queue.delivery(deliveryId)!.nextAttemptAt, new Date(started + 5000));
    assert.deepEqual(h.queue.delivery(deliveryId)!.attempts[0]!.statusCode, 500);
    assert.equal(h.queue.endpoint(endpoint.id)!.failingSince?.getTime(), started);

    h.clock.advance(4999);
    await sleep(500);
    assert.equal(r.received.length, 1, "not before the delay on the injected clock, however much real time passes");
    h.clock.advance(1);
    await r.nth(2, 3000);
    const [first, second] = r.received;
    assert.equal(second!.headers["webhook-id"], first!.headers["webhook-id"], "the same webhook-id on every retry");
    verifyDelivery(endpoint.secret, second!);
    await waitUntil(() => h.queue.delivery(deliveryId)!.status === "succeeded", "the retry succeeded");
    assert.equal(h.queue.endpoint(endpoint.id)!.failingSince, null, "a success clears the failing state");
    assert.deepEqual(h.metrics.attempts.map((a) => a.outcome), ["http-error", "success"]);
  });

  it("retries after a timeout, recording no status and the reason", async () => {
    h = startEngineHarness({ timeoutMs: 1000 });
    const r = await receiver((_, index) => (index === 0 ? "hang" : { status: 200 }));
    const endpoint = h.endpoint(r.url);
    const { deliveryId } = h.deliver(endpoint.id);
    await waitUntil(() => h.queue.delivery(deliveryId)!.attempts.length === 1, "the timed-out attempt is recorded");
    const [attempt] = h.queue.delivery(deliveryId)!.attempts;
    assert.equal(attempt!.statusCode, null);
    assert.equal(attempt!.error, "no answer within 1000 ms");
    assert.ok(attempt!.durationMs >= 990, `${attempt!.durationMs} ms`);
    h.clock.advance(5000);
    await r.nth(2);
    verifyDelivery(endpoint.secret, r.received[1]!);
    await waitUntil(() => h.queue.delivery(deliveryId)!.status === "succeeded", "the retry succeeded");
    assert.deepEqual(h.metrics.attempts.map((a) => a.outcome), ["timeout", "success"]);
  });

  it("waits at least a 429's Retry-After before retrying", async () => {
    h = startEngineHarness();
    const r = await receiver((_, index) => (index === 0 ? { status: 429, headers: { "retry-after": "120" } } : { status: 200 }));
    const { deliveryId } = h.deliver(h.endpoint(r.url).id);
    await waitUntil(() => h.queue.delivery(deliveryId)!.attempts.length === 1, "the throttled attempt is recorded");
    assert.deepEqual(h.queue.delivery(deliveryId)!.nextAttemptAt, new Date(h.clock.now().getTime() + 120_000));
    h.clock.advance(60_000);
    await sleep(300);
    assert.equal(r.received.length, 1, "the 5 s step is not enough when the receiver asked for 120 s");
    h.clock.advance(60_000);
    await r.nth(2);
  });

  it("disables an endpoint that answers 410, failing its other pending deliveries", async () => {
    h = startEngineHarness();
    const r = await receiver(() => ({ status: 410 }));
    const endpoint = h.endpoint(r.url);
    const first = h.deliver(endpoint.id);
    await waitUntil(() => h.queue.delivery(first.deliveryId)!.status !== "pending", "the first delivery ended");
    assert.equal(h.queue.delivery(first.deliveryId)!.status, "failed");
    assert.equal(h.queue.delivery(first.deliveryId)!.attempts[0]!.statusCode, 410);
    assert.deepEqual(
      { status: h.queue.endpoint(endpoint.id)!.status, reason: h.queue.endpoint(endpoint.id)!.disabledReason },
      { status: "disabled", reason: "gone" },
    );
    const later = h.deliver(endpoint.id);
    h.clock.advance(day);
    await sleep(300);
    assert.equal(r.received.length, 1, "a disabled endpoint gets nothing more");
    assert.equal(h.queue.delivery(later.deliveryId)!.status, "failed", "enqueued as the endpoint was disabled: ended without an attempt");
    assert.equal(h.queue.delivery(later.deliveryId)!.attempts.length, 0);
    const line = h.logs.lines().find((l) => l["msg"] === "webhook endpoint disabled: it answered 410 Gone");
    assert.deepEqual(line && { endpointId: line["endpointId"], reason: line["reason"] }, { endpointId: endpoint.id, reason: "gone" });
    assert.deepEqual(h.metrics.deliveries.map((d) => d.outcome), ["failed"]);
  });

  it("fails a 410 endpoint's idle pending deliveries when it is disabled", async () => {
    h = startEngineHarness({ engine: { perEndpointConcurrency: 1 } });
    let answer = 500;
    const r = await receiver(() => ({ status: answer }));
    const endpoint = h.endpoint(r.url);
    const waiting = h.deliver(endpoint.id);
    await waitUntil(() => h.queue.delivery(waiting.deliveryId)!.attempts.length === 1, "the first delivery waits for its retry");
    answer = 410;
    const deciding = h.deliver(endpoint.id);
    await waitUntil(() => h.queue.delivery(deciding.deliveryId)!.status === "failed", "the 410 ended its delivery");
    assert.equal(h.queue.delivery(waiting.deliveryId)!.status, "failed");
    assert.deepEqual(h.metrics.deliveries, [
      { outcome: "failed", seconds: 0 },
      { outcome: "failed", seconds: null },
    ]);
  });

  it("marks a delivery failed after its last attempt", async () => {
    h = startEngineHarness({ schedule: "1s,2s" });
    const r = await receiver(() => ({ status: 503 }));
    const { deliveryId } = h.deliver(h.endpoint(r.url).id);
    for (const [delay, count] of [[1000, 2], [2000, 3]] as const) {
      await waitUntil(() => h.queue.delivery(deliveryId)!.attempts.length === count - 1, `attempt ${count - 1} is recorded`);
      h.clock.advance(delay);
      await r.nth(count);
    }
    await waitUntil(() => h.queue.delivery(deliveryId)!.status === "failed", "the delivery failed");
    const delivery = h.queue.delivery(deliveryId)!;
    assert.deepEqual(delivery.attempts.map((a) => a.statusCode), [503, 503, 503]);
    assert.equal(delivery.nextAttemptAt, null);
    h.clock.advance(day);
    await sleep(200);
    assert.equal(r.received.length, 3);
    assert.deepEqual(h.metrics.deliveries, [{ outcome: "failed", seconds: 3 }]);
  });

  it("disables an endpoint that has been failing continuously for 5 days", async () => {
    h = startEngineHarness({ schedule: "1h" });
    const r = await receiver(() => ({ status: 500 }));
    const endpoint = h.endpoint(r.url);
    const start = h.clock.now();
    const first = h.deliver(endpoint.id);
    await waitUntil(() => h.queue.delivery(first.deliveryId)!.attempts.length === 1, "the first attempt is recorded");
    h.clock.advance(hour);
    await waitUntil(() => h.queue.delivery(first.deliveryId)!.status === "failed", "the first delivery used its schedule");
    assert.deepEqual(h.queue.endpoint(endpoint.id)!.failingSince, start);
    h.clock.advance(4 * day);
    const second = h.deliver(endpoint.id);
    await waitUntil(() => h.queue.delivery(second.deliveryId)!.attempts.length === 1, "4 days on, still failing");
    assert.equal(h.queue.endpoint(endpoint.id)!.status, "enabled");
    assert.deepEqual(h.queue.endpoint(endpoint.id)!.failingSince, start);
    h.clock.advance(day - hour);
    await waitUntil(() => h.queue.delivery(second.deliveryId)!.status === "failed", "5 days of failures end it");
    assert.deepEqual(
      { status: h.queue.endpoint(endpoint.id)!.status, reason: h.queue.endpoint(endpoint.id)!.disabledReason },
      { status: "disabled", reason: "failing" },
    );
    assert.equal(h.queue.delivery(second.deliveryId)!.attempts.length, 2);
    assert.ok(h.logs.lines().some((l) => l["msg"] === "webhook endpoint disabled: failing for too long" && l["endpointId"] === endpoint.id));
  });

  it("signs with both secrets for 24 hours after a rotation, then with the new one only", async () => {
    h = startEngineHarness();
    const r = await receiver();
    const old = generateWebhookSecret();
    const fresh = generateWebhookSecret();
    const endpoint = h.endpoint(r.url, rotateSigningSecrets([{ secret: old, expiresAt: null }], fresh, h.clock.now()));
    h.deliver(endpoint.id);
    const during = await r.nth(1);
    assert.equal(String(during.headers["webhook-signature"]).split(" ").length, 2);
    verifyDelivery(fresh, during);
    verifyDelivery(old, during);

    h.clock.advance(day - 1);
    h.deliver(endpoint.id);
    verifyDelivery(old, await r.nth(2));

    h.clock.advance(1);
    h.deliver(endpoint.id);
    const after = await r.nth(3);
    assert.equal(String(after.headers["webhook-signature"]).split(" ").length, 1);
    verifyDelivery(fresh, after);
    assert.throws(() => verifyDelivery(old, after), WebhookVerificationError);
  });
});
