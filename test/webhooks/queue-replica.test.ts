import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { MessageChannel } from "node:worker_threads";
import { createMemoryDeliveryQueue, type MemoryDeliveryQueue } from "../../src/store/memory/memory-delivery-queue.js";
import { createWorkerDeliveryQueue, replicateToWorker } from "../../src/webhooks/queue-replica.js";
import type { DeliveryQueue } from "../../src/store/delivery-queue.js";

const t0 = new Date("2026-05-01T10:00:00.000Z");
const at = (ms: number) => new Date(t0.getTime() + ms);
const secrets = [{ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", expiresAt: null }];
const claimAll = (queue: DeliveryQueue, now = at(100)) => queue.claim({ now, owner: "worker", leaseMs: 60_000, limit: 10, perEndpointLimit: 10 });
const ok = { attempt: { at: at(150), statusCode: 204, durationMs: 3, error: null }, next: { status: "succeeded" as const }, endpoint: { kind: "succeeded" as const } };
/** Until both ports have handed over what was posted (a turn for the batch, one for the message, on each side). */
const settle = async () => {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * The memory queue split between the API's copy and the delivery worker's
 * (queue-replica.ts, issue 21 §2), over a real MessageChannel in one thread:
 * what the API changes reaches the worker's copy in order, what the worker's
 * copy records comes back to the API's, and a new worker starts from a
 * snapshot in which whatever was not reported back is still pending.
 */
describe("queue replica: the API's copy and the worker's", () => {
  let api: MemoryDeliveryQueue;
  const closers: (() => void)[] = [];
  afterEach(() => closers.splice(0).forEach((close) => close()));

  function start(onFinal: () => void = () => {}) {
    const channel = new MessageChannel();
    const replica = replicateToWorker(api, channel.port1, onFinal);
    let woken = 0;
    const worker = createWorkerDeliveryQueue(channel.port2, replica.snapshot, () => (woken += 1));
    closers.push(() => {
      replica.stop();
      channel.port1.close();
    });
    return { worker, woken: () => woken };
  }

  it("sends the API's enqueues to the worker's copy, and the worker's attempts and endpoint state back", async () => {
    api = createMemoryDeliveryQueue();
    api.putEndpoint({ id: "we_1", url: "https://a.example.com/hook", secrets, merchantId: "mer_1" });
    const { worker, woken } = start();
    api.enqueue({ id: "whd_1", eventId: "evt_1", eventType: "payment_intent.created", endpointId: "we_1", body: "{}", createdAt: at(0) });
    api.enqueue({ id: "whd_2", eventId: "evt_2", eventType: "payment_intent.created", endpointId: "we_1", body: "{}", createdAt: at(1) });
    assert.deepEqual(await claimAll(worker), [], "nothing before this turn's changes are posted");
    await settle();
    assert.equal(woken(), 1, "one wake-up for the turn's two enqueues");
    const claimed = await claimAll(worker);
    assert.deepEqual(
      claimed.map((c) => [c.deliveryId, c.endpoint.url]),
      [
        ["whd_1", "https://a.example.com/hook"],
        ["whd_2", "https://a.example.com/hook"],
      ],
    );
    const failure = {
      attempt: { at: at(150), statusCode: 500, durationMs: 3, error: null },
      next: { status: "pending" as const, nextAttemptAt: at(5000) },
      endpoint: { kind: "failed" as const, at: at(150), disableIfFailingSince: at(-1) },
    };
    const { results } = await worker.settle({ completions: [{ lease: claimed[0]!.lease, ...ok }, { lease: claimed[1]!.lease, ...failure }] });
    assert.equal(results.length, 2);
    assert.equal(api.delivery("whd_1")!.status, "pending", "not before the worker's update arrives");
    await settle();
    const first = api.delivery("whd_1")!;
    assert.deepEqual([first.status, first.attempts, first.nextAttemptAt], ["succeeded", [ok.attempt], null]);
    const second = api.delivery("whd_2")!;
    assert.deepEqual([second.status, second.attempts, second.nextAttemptAt], ["pending", [failure.attempt], at(5000)]);
    assert.deepEqual(api.endpoint("we_1")!.failingSince, at(150));
    assert.deepEqual(await worker.stats(at(10_000)), { pending: 1, due: 1, oldestPendingCreatedAt: at(1) }, "the ended delivery left the worker's copy");
  });

  it("retires an endpoint on both copies: the worker claims none of its deliveries again, one in flight is still recorded", async () => {
    api = createMemoryDeliveryQueue();
    api.putEndpoint({ id: "we_1", url: "https://a.example.com/hook", secrets });
    const { worker } = start();
    for (const id of ["whd_1", "whd_2"]) api.enqueue({ id, eventId: `evt_${id}`, eventType: "payment_intent.created", endpointId: "we_1", body: "{}", createdAt: at(0) });
    await settle();
    const [inFlight] = await worker.claim({ now: at(100), owner: "worker", leaseMs: 60_000, limit: 1, perEndpointLimit: 10 });
    api.retireEndpoint("we_1", at(120));
    await settle();
    assert.deepEqual(await claimAll(worker), []);
    await worker.complete({ lease: inFlight!.lease, ...ok });
    await settle();
    assert.deepEqual(
      api.deliveriesOf("we_1").map((d) => [d.id, d.status, d.attempts.length]),
      [
        ["whd_1", "succeeded", 1],
        ["whd_2", "failed", 0],
      ],
    );
  });

  it("marks the worker's last update final, and starts a new worker from a snapshot where unreported deliveries are pending", async () => {
    api = createMemoryDeliveryQueue();
    api.putEndpoint({ id: "we_1", url: "https://a.example.com/hook", secrets });
    let finals = 0;
    const dead = start(() => (finals += 1));
    api.enqueue({ id: "whd_1", eventId: "evt_1", eventType: "payment_intent.created", endpointId: "we_1", body: "{}", createdAt: at(0) });
    await settle();
    await claimAll(dead.worker);
    dead.worker.flush(true);
    await settle();
    assert.equal(finals, 1);
    // The worker died with its delivery in flight: the next one finds it pending and unleased, and sends it (at least once).
    const next = start();
    const again = await claimAll(next.worker);
    assert.deepEqual(
      again.map((c) => c.deliveryId),
      ["whd_1"],
    );
    assert.deepEqual(await claimAll(dead.worker), [], "the old copy is no longer fed");
  });
});
