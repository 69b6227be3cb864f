import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryDeliveryQueue } from "../../src/store/memory/memory-delivery-queue.js";
import { describeDeliveryQueueContract } from "./support/delivery-queue-contract.js";

describeDeliveryQueueContract("memory", async () => {
  const queue = createMemoryDeliveryQueue();
  return {
    queue,
    addEndpoint: async (endpoint) => queue.putEndpoint(endpoint),
    enqueue: async (delivery) => queue.enqueue(delivery),
    delivery: async (id) => queue.delivery(id),
    endpoint: async (id) => {
      const endpoint = queue.endpoint(id);
      return endpoint && { status: endpoint.status, disabledReason: endpoint.disabledReason, failingSince: endpoint.failingSince };
    },
    close: async () => {},
  };
});

describe("createMemoryDeliveryQueue", () => {
  it("refuses a delivery for an unknown endpoint or with a used id", () => {
    const queue = createMemoryDeliveryQueue();
    const delivery = { id: "whd_1", eventId: "evt_1", eventType: "payment_intent.created", endpointId: "we_1", body: "{}", createdAt: new Date() };
    assert.throws(() => queue.enqueue(delivery), /unknown webhook endpoint we_1/);
    queue.putEndpoint({ id: "we_1", url: "https://a.example.com/", secrets: [] });
    queue.enqueue(delivery);
    assert.throws(() => queue.enqueue(delivery), /already exists/);
  });

  it("hands out copies, so callers cannot change what it holds", async () => {
    const queue = createMemoryDeliveryQueue();
    queue.putEndpoint({ id: "we_1", url: "https://a.example.com/", secrets: [{ secret: "whsec_a", expiresAt: null }] });
    queue.enqueue({ id: "whd_1", eventId: "evt_1", eventType: "t", endpointId: "we_1", body: "{}", createdAt: new Date(0) });
    queue.delivery("whd_1")!.attempts.push({ at: new Date(), statusCode: 200, durationMs: 1, error: null });
    queue.endpoint("we_1")!.secrets.push({ secret: "whsec_b", expiresAt: null });
    const [claimed] = await queue.claim({ now: new Date(1), owner: "t", leaseMs: 1000, limit: 1, perEndpointLimit: 1 });
    claimed!.endpoint.secrets.length = 0;
    assert.equal(queue.delivery("whd_1")!.attempts.length, 0);
    assert.equal(queue.endpoint("we_1")!.secrets.length, 1);
  });

  it("retires an endpoint: waiting deliveries fail now, one in flight fails when it completes, none is claimed again", async () => {
    const queue = createMemoryDeliveryQueue();
    queue.putEndpoint({ id: "we_1", url: "https://a.example.com/", secrets: [] });
    for (const id of ["whd_1", "whd_2"]) queue.enqueue({ id, eventId: `evt_${id}`, eventType: "t", endpointId: "we_1", body: "{}", createdAt: new Date(0) });
    const [inFlight] = await queue.claim({ now: new Date(1), owner: "t", leaseMs: 60_000, limit: 1, perEndpointLimit: 1 });
    assert.equal(queue.retireEndpoint("we_1", new Date(5)), 1);
    assert.deepEqual(
      queue.deliveriesOf("we_1").map((d) => [d.id, d.status]),
      [
        ["whd_1", "pending"],
        ["whd_2", "failed"],
      ],
    );
    const completion = await queue.complete({
      lease: inFlight!.lease,
      attempt: { at: new Date(6), statusCode: 500, durationMs: 1, error: null },
      next: { status: "pending", nextAttemptAt: new Date(7) },
      endpoint: { kind: "failed", at: new Date(6), disableIfFailingSince: new Date(-1) },
    });
    assert.deepEqual(completion, { recorded: true, status: "failed", endpointDisabled: null, otherDeliveriesFailed: 0 });
    assert.deepEqual(await queue.claim({ now: new Date(100), owner: "t", leaseMs: 60_000, limit: 10, perEndpointLimit: 10 }), []);
    assert.deepEqual(queue.deliveriesOf("we_other"), []);
  });
});
