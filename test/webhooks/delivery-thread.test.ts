import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { startSandboxService, type SandboxService } from "../support/sandbox-service.js";
import { startReceiver, waitUntil, type Answer } from "./support/receiver.js";

/**
 * Delivery on a worker thread (issue 21 §2), as a server process runs it
 * (WEBHOOK_WORKER_THREAD, on by default for `serve`), on the suite's store:
 * in memory the worker claims and completes over a message port served by
 * the main thread's queue; on PostgreSQL (TEST_STORE=postgres) it has its
 * own pool and opens the sealed secrets itself.
 */
describe("webhook delivery on a worker thread", () => {
  let service: SandboxService;
  let merchant: { merchantId: string; apiKey: string };
  let answer: (index: number) => Answer = () => ({ status: 204 });
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver((_request, index) => answer(index));
    service = await startSandboxService(
      {
        TEST_HELPERS: "true",
        WEBHOOK_ALLOW_PRIVATE_URLS: "true",
        WEBHOOK_POLL_INTERVAL_MS: "100",
        WEBHOOK_SECRET_KEY: "cd".repeat(32),
        SHUTDOWN_GRACE_MS: "5000",
      },
      { deliveryThread: true },
    );
    merchant = await service.running.testHelpers!.createMerchant("Worker Thread");
  });
  after(async () => {
    await service?.close();
    await receiver?.close();
  });

  async function createIntent(reference: string) {
    const res = await service.call("POST", "/v2/payment-intents", {
      key: merchant.apiKey,
      json: { amount: 50000, customerEmail: "ada@example.com", clientReference: reference },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string };
  }

  it("delivers each event once, signed with the endpoint's secret, and reports its attempts to the main thread's metrics", async () => {
    const made = await service.call("POST", "/v2/webhook-endpoints", { key: merchant.apiKey, json: { url: receiver.url } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const verifier = new Webhook(made.body.secret as string);
    const intents = [];
    for (let i = 0; i < 20; i++) intents.push(await createIntent(`thread-${i}`));
    await waitUntil(() => receiver.received.length >= 20, "20 deliveries", 20_000);
    const ids = new Set<string>();
    for (const request of receiver.received) {
      const event = verifier.verify(request.body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      }) as { type: string; data: { id: string } };
      assert.equal(event.type, "payment_intent.created");
      ids.add(event.data.id);
    }
    assert.deepEqual([...ids].sort(), intents.map((intent) => intent.id).sort());
    // Metrics come back in batches (every 250 ms).
    let text = "";
    for (let i = 0; i < 50 && !/payments_webhook_deliveries_total\{outcome="succeeded"\} 20\b/.test(text); i++) {
      text = await fetch(`${service.url}/metrics`).then((res) => res.text());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.match(text, /payments_webhook_deliveries_total\{outcome="succeeded"\} 20\b/);
  });

  it("lets an attempt in flight finish when the service stops (the worker drains within the grace)", async () => {
    const list = await service.call("GET", "/v2/webhook-endpoints", { key: merchant.apiKey });
    const endpointId = (list.body.webhookEndpoints as { id: string }[])[0]!.id;
    const before = receiver.received.length;
    answer = () => ({ status: 204, delayMs: 700 });
    const intent = await createIntent("thread-drain");
    await receiver.nth(before + 1, 10_000);
    // The engine stops (the worker drains) while the receiver is still answering; the port stays open to read the outcome.
    await service.running.closeStores();
    const deliveries = await service.call("GET", `/v2/webhook-endpoints/${endpointId}/deliveries`, { key: merchant.apiKey });
    assert.equal(deliveries.status, 200, JSON.stringify(deliveries.body));
    const mine = (deliveries.body.deliveries as { eventId: string; status: string; attempts: { statusCode: number }[] }[]).filter((d) =>
      receiver.received.slice(before).some((r) => r.headers["webhook-id"] === d.eventId),
    );
    assert.equal(mine.length, 1, `the delivery of ${intent.id}`);
    assert.equal(mine[0]!.status, "succeeded");
    assert.deepEqual(
      mine[0]!.attempts.map((a) => a.statusCode),
      [204],
    );
  });
});
