import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { generateWebhookSecret } from "../../src/webhooks/signing.js";
import { createTestDatabase, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { startSandboxService, type SandboxService } from "../support/sandbox-service.js";
import { startReceiver, type Answer } from "../webhooks/support/receiver.js";

const skip = await postgresUnavailable();

const ids = createIdGenerator(createSystemClock());

/**
 * The whole service on PostgreSQL: events are recorded with the change,
 * deliveries are rows, so a delivery an instance handed back when it stopped
 * is sent by the next instance on the same database, signed with the secret
 * it reads sealed from the database.
 */
describe("webhooks end to end (PostgreSQL)", { skip }, () => {
  let db: TestDatabase;
  const env = (): Record<string, string> => ({
    DATABASE_URL: db.url,
    TEST_HELPERS: "true",
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_POLL_INTERVAL_MS: "100",
    WEBHOOK_SECRET_KEY: "ab".repeat(32),
    SHUTDOWN_GRACE_MS: "300",
  });
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db?.drop());

  it("sends a delivery handed back by a stopped instance from the next one, signed with the sealed secret", async () => {
    let answer: Answer = "hang";
    const receiver = await startReceiver(() => answer);
    let first: SandboxService | undefined;
    let second: SandboxService | undefined;
    try {
      first = await startSandboxService(env());
      const merchant = await first.running.testHelpers!.createMerchant("Durable");
      const secret = generateWebhookSecret();
      const registered = await first.running.webhooks.endpoints.create(
        { livemode: false, id: ids.webhookEndpointId(false), merchantId: merchant.merchantId, url: receiver.url, eventTypes: [], description: null, secret, createdAt: new Date() },
        16,
      );
      assert.ok(registered.created);
      const { rows } = await queryDatabase<{ secrets: string }>(db.url, "select secrets::text as secrets from webhook_endpoints");
      assert.ok(!rows[0]!.secrets.includes(secret.slice("whsec_".length)), "the secret is not stored in the clear");

      const created = await first.call("POST", "/v2/payment-intents", {
        key: merchant.apiKey,
        json: { amount: 50000, customerEmail: "ada@example.com", clientReference: "durable-1" },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const hung = await receiver.nth(1);
      await first.close();
      first = undefined;
      const pending = await queryDatabase<{ status: string; attempts: unknown[]; lease_token: string | null }>(
        db.url,
        "select status, attempts, lease_token from webhook_deliveries",
      );
      assert.deepEqual(pending.rows, [{ status: "pending", attempts: [], lease_token: null }], "handed back, unattempted");

      answer = { status: 204 };
      second = await startSandboxService(env());
      const sent = await receiver.nth(2, 5000);
      assert.equal(sent.headers["webhook-id"], hung.headers["webhook-id"]);
      const event = new Webhook(secret).verify(sent.body, sent.headers as Record<string, string>) as { type: string; data: { id: string } };
      assert.equal(event.type, "payment_intent.created");
      assert.equal(event.data.id, created.body.id);
      const deadline = performance.now() + 5000;
      let status = "pending";
      while (status === "pending" && performance.now() < deadline) {
        status = (await queryDatabase<{ status: string }>(db.url, "select status from webhook_deliveries")).rows[0]!.status;
        if (status === "pending") await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(status, "succeeded");
    } finally {
      await first?.close().catch(() => {});
      await second?.close().catch(() => {});
      await receiver.close();
    }
  });
  it("delivers each event once with two instances on one database, at most the per-endpoint limit in flight", async () => {
    let inFlight = 0;
    let most = 0;
    const receiver = await startReceiver(() => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      // Counted out just before the answer leaves, so the next request is never counted with it.
      setTimeout(() => (inFlight -= 1), 25);
      return { status: 204, delayMs: 30 };
    });
    const instances: SandboxService[] = [];
    try {
      const shared = { ...env(), WEBHOOK_CONCURRENCY_PER_ENDPOINT: "2" };
      instances.push(await startSandboxService(shared), await startSandboxService(shared));
      const [a, b] = instances as [SandboxService, SandboxService];
      const merchant = await a.running.testHelpers!.createMerchant("Shared");
      const registered = await a.running.webhooks.endpoints.create(
        { livemode: false, id: ids.webhookEndpointId(false), merchantId: merchant.merchantId, url: receiver.url, eventTypes: [], description: null, secret: generateWebhookSecret(), createdAt: new Date() },
        16,
      );
      assert.ok(registered.created);
      const creates = Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).call("POST", "/v2/payment-intents", {
          key: merchant.apiKey,
          json: { amount: 50000, customerEmail: "ada@example.com", clientReference: `shared-${i}` },
        }),
      );
      for (const res of await Promise.all(creates)) assert.equal(res.status, 201);
      await receiver.nth(20, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const webhookIds = receiver.received.map((r) => r.headers["webhook-id"]);
      assert.equal(webhookIds.length, 20, "no event sent twice");
      assert.equal(new Set(webhookIds).size, 20);
      assert.ok(most <= 2, `${most} deliveries in flight to one endpoint`);
    } finally {
      for (const instance of instances) await instance.close().catch(() => {});
      await receiver.close();
    }
  });
});
