import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryDeliveryQueue } from "../../src/webhooks/memory-delivery-queue.js";
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
});
