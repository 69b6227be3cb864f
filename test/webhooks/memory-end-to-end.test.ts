import assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { generateWebhookSecret } from "../../src/webhooks/signing.js";
import { startSandboxService, type SandboxService } from "../support/sandbox-service.js";
import { startReceiver, waitUntil, type Answer, type ReceivedRequest, type Receiver } from "./support/receiver.js";

const ids = createIdGenerator(createSystemClock());

/**
 * The whole service in memory mode, as `payment-intents serve` starts it:
 * an intent created over REST is recorded as an event and delivered to the
 * merchant's endpoint, signed so the standardwebhooks package verifies it,
 * and a failed attempt is retried on the service's (test) clock.
 */
describe("webhooks end to end (memory stores)", () => {
  let service: SandboxService;
  let merchant: { merchantId: string; apiKey: string };
  const receivers: Receiver[] = [];

  before(async () => {
    service = await startSandboxService({
      TEST_HELPERS: "true",
      TEST_CLOCK: "true",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      WEBHOOK_POLL_INTERVAL_MS: "100",
      WEBHOOK_RETRY_SCHEDULE: "5m,30m",
    });
    merchant = await service.running.testHelpers!.createMerchant("Webhook Stores");
  });
  after(() => service.close());
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  async function receiver(answer?: (request: ReceivedRequest, index: number) => Answer): Promise<Receiver> {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  }

  /** Registers an endpoint through the in-process store (the endpoint API is served elsewhere). */
  async function register(url: string, merchantId = merchant.merchantId) {
    const secret = generateWebhookSecret();
    const result = await service.running.webhooks.endpoints.create(
      { livemode: false, id: ids.webhookEndpointId(false), merchantId, url, eventTypes: [], description: null, secret, createdAt: new Date() },
      16,
    );
    assert.ok(result.created);
    return { id: result.endpoint.id, secret };
  }

  let references = 0;
  async function createIntent(key = merchant.apiKey): Promise<{ id: string }> {
    const res = await service.call("POST", "/v2/payment-intents", {
      key,
      json: { amount: 50000, customerEmail: "ada@example.com", clientReference: `webhooks-${++references}` },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  }

  it("signs with at most two secrets after 3,000 rotations (the newest and the one in its grace); a grace of 0 retires the old at once", async () => {
    const r = await receiver();
    const made = await service.call("POST", "/v2/webhook-endpoints", { key: merchant.apiKey, json: { url: r.url } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const rotate = async (json: Record<string, unknown>) => {
      const res = await service.call("POST", `/v2/webhook-endpoints/${made.body.id}/rotate-secret`, { key: merchant.apiKey, json });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.secret as string;
    };
    const secrets = [made.body.secret as string];
    // 2,990 rotations through the store (REST costs ~10 ms each on a shared machine), the last 10 over REST.
    for (let i = 0; i < 2990; i++) {
      const secret = generateWebhookSecret();
      await service.running.webhooks.endpoints.rotateSecret(merchant.merchantId, made.body.id, secret, new Date(), 86_400_000);
      secrets.push(secret);
    }
    for (let i = 0; i < 10; i++) secrets.push(await rotate({}));
    await createIntent();
    const got = await r.nth(1);
    const signatures = String(got.headers["webhook-signature"]).split(" ");
    assert.equal(signatures.length, 2, "the newest secret and the one it replaced");
    for (const secret of secrets.slice(-2)) new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    assert.throws(() => new Webhook(secrets.at(-3)!).verify(got.body, got.headers as Record<string, string>), "an older grace ended");

    const leaked = secrets.at(-1)!;
    const fresh = await rotate({ graceSeconds: 0 });
    await createIntent();
    const next = await r.nth(2);
    assert.equal(String(next.headers["webhook-signature"]).split(" ").length, 1);
    new Webhook(fresh).verify(next.body, next.headers as Record<string, string>);
    assert.throws(() => new Webhook(leaked).verify(next.body, next.headers as Record<string, string>), "retired at once");

    for (const graceSeconds of [-1, 86401, 1.5, "60"]) {
      const res = await service.call("POST", `/v2/webhook-endpoints/${made.body.id}/rotate-secret`, { key: merchant.apiKey, json: { graceSeconds } });
      assert.equal(res.status, 400, JSON.stringify(graceSeconds));
    }
    const refused = await service.call("POST", `/v2/webhook-endpoints/${made.body.id}/rotate-secret`, { key: merchant.apiKey, json: { graceSeconds: 86401 } });
    assert.deepEqual(refused.body, {
      status: 400,
      title: "Bad Request",
      message: "graceSeconds must be a whole number of seconds from 0 to 86400 (24 hours)",
    });
    assert.equal((await service.call("DELETE", `/v2/webhook-endpoints/${made.body.id}`, { key: merchant.apiKey })).status, 200);
  });

  it("delivers a created intent's event, verified by standardwebhooks, with the intent in the GET shape", async () => {
    const r = await receiver();
    const endpoint = await register(r.url);
    const other = await service.running.testHelpers!.createMerchant("Someone Else");
    const otherReceiver = await receiver();
    await register(otherReceiver.url, other.merchantId);

    const intent = await createIntent();
    const got = await r.nth(1);
    const event = new Webhook(endpoint.secret).verify(got.body, got.headers as Record<string, string>) as Record<string, any>;
    const get = await service.call("GET", `/v2/payment-intents/${intent.id}`, { key: merchant.apiKey });
    assert.equal(get.status, 200);
    assert.deepEqual(Object.keys(event), ["id", "type", "timestamp", "data", "refund", "livemode", "apiKey"]);
    assert.equal(event.type, "payment_intent.created");
    assert.equal(event.refund, null);
    assert.match(event.id, /^evt_test_[0-9a-f-]{36}$/);
    assert.equal(event.timestamp, get.body.createdAt);
    assert.deepEqual(event.data, get.body);

    assert.equal(got.method, "POST");
    assert.equal(got.headers["webhook-id"], event.id);
    assert.equal(got.headers["content-type"], "application/json");
    assert.equal(got.headers["user-agent"], "payment-intents-webhooks/1.0 (Standard Webhooks)");
    const stored = await service.running.webhooks.events.findById(merchant.merchantId, event.id);
    assert.equal(stored?.body, got.body, "the body sent is the event's stored JSON, byte for byte");

    await waitUntil(() => service.logs.some((line) => line.message === "webhook attempt" && line.fields.eventId === event.id), "the attempt is logged");
    const line = service.logs.find((l) => l.message === "webhook attempt" && l.fields.eventId === event.id)!;
    assert.deepEqual([line.fields.outcome, line.fields.deliveryStatus, line.fields.statusCode], ["success", "succeeded", 200]);
    assert.ok(!JSON.stringify(line.fields).includes(r.url), "the URL is never logged");
    assert.equal(otherReceiver.received.length, 0, "another merchant's endpoint gets nothing");
  });

  it("retries a failed attempt once the service's clock reaches the retry's time", async () => {
    const r = await receiver((_request, index) => (index === 0 ? { status: 503 } : { status: 204 }));
    const endpoint = await register(r.url);
    const listDeliveries = () =>
      service.running.webhooks.endpoints.listDeliveries({ merchantId: merchant.merchantId, endpointId: endpoint.id, limit: 10 });

    await createIntent();
    const first = await r.nth(1);
    // Advance only once the failure is recorded: the retry's time is counted from the end of the attempt.
    let attempts = 0;
    const deadline = performance.now() + 5000;
    while (attempts === 0 && performance.now() < deadline) {
      attempts = (await listDeliveries())![0]?.attempts.length ?? 0;
      if (attempts === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(attempts, 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(r.received.length, 1, "the retry waits for 5 minutes of the service's clock");

    const advanced = await service.call("POST", "/v2/test-helpers/clock/advance", { key: merchant.apiKey, json: { seconds: 6 * 60 } });
    assert.equal(advanced.status, 200, JSON.stringify(advanced.body));
    const second = await r.nth(2, 3000);
    assert.equal(second.headers["webhook-id"], first.headers["webhook-id"], "a retry carries the same webhook-id");
    assert.deepEqual(new Webhook(endpoint.secret).verify(second.body, second.headers as Record<string, string>), JSON.parse(first.body));
    // webhook-timestamp is real time, not the advanced clock, so receivers accept it.
    assert.ok(Math.abs(Number(second.headers["webhook-timestamp"]) - Date.now() / 1000) < 60);

    await waitUntil(() => service.logs.some((l) => l.message === "webhook attempt" && l.fields.attempt === 2 && l.fields.endpointId === endpoint.id), "the retry is recorded");
    const [delivery] = (await listDeliveries())!;
    assert.equal(delivery?.status, "succeeded");
    assert.deepEqual(
      delivery?.attempts.map((a) => a.statusCode),
      [503, 204],
    );
  });

  it("stops within the shutdown grace, handing an unanswered attempt back as pending", async () => {
    // The endpoint never answers and the attempt's own timeout is a minute: only the 300 ms grace can end it sooner.
    const stopping = await startSandboxService({ WEBHOOK_ALLOW_PRIVATE_URLS: "true", SHUTDOWN_GRACE_MS: "300", WEBHOOK_TIMEOUT_MS: "60000" });
    try {
      const owner = await stopping.running.testHelpers!.createMerchant("Stopping");
      const r = await receiver(() => "hang");
      const secret = generateWebhookSecret();
      const created = await stopping.running.webhooks.endpoints.create(
        { livemode: false, id: ids.webhookEndpointId(false), merchantId: owner.merchantId, url: r.url, eventTypes: [], description: null, secret, createdAt: new Date() },
        16,
      );
      assert.ok(created.created);
      const res = await stopping.call("POST", "/v2/payment-intents", {
        key: owner.apiKey,
        json: { amount: 50000, customerEmail: "ada@example.com", clientReference: "stopping-1" },
      });
      assert.equal(res.status, 201);
      await r.nth(1);

      const started = performance.now();
      await stopping.close();
      const tookMs = performance.now() - started;
      assert.ok(tookMs < 30_000, `closing took ${Math.round(tookMs)} ms: it waited for the attempt's timeout, not the grace`);
      assert.equal(stopping.running.webhooks.closing.aborted, true);
      const [delivery] = (await stopping.running.webhooks.endpoints.listDeliveries({
        merchantId: owner.merchantId,
        endpointId: created.endpoint.id,
        limit: 10,
      }))!;
      assert.deepEqual([delivery?.status, delivery?.attempts.length], ["pending", 0]);
    } finally {
      await stopping.close().catch(() => {});
    }
  });
});
