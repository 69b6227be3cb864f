import assert from "node:assert/strict";
import { describe, after, before, it } from "node:test";
import { createSecretBox } from "../../src/lib/secret-box.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { sealSecrets, parseAttempts } from "../../src/store/postgres/webhook-rows.js";
import { describeDeliveryQueueContract, type DeliveryQueueHarness } from "../webhooks/support/delivery-queue-contract.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";

const skip = await postgresUnavailable();

const merchantId = "mer_queue";
// Secrets are sealed for real, so the claim's opening is part of what is tested.
const secretBox = createSecretBox({ key: Buffer.alloc(32, 7) });

describe("PostgreSQL delivery queue", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url, { poolMax: 10, secretBox });
    await stores.apiKeys.ensureMerchant(merchantId, "Queue Merchant");
  });
  after(async () => {
    await stores?.close();
    await db?.drop();
  });

  const query = <R extends Record<string, unknown>>(sql: string, params: unknown[] = []) => queryDatabase<R>(db.url, sql, params);

  const makeHarness = async (): Promise<DeliveryQueueHarness> => {
    await query("truncate webhook_deliveries, webhook_endpoints, events");
    const merchantOf = new Map<string, string>();
    return {
      queue: stores.deliveryQueue,
      async addEndpoint(endpoint) {
        const status = endpoint.status ?? "enabled";
        const owner = endpoint.merchantId ?? merchantId;
        if (owner !== merchantId) await stores.apiKeys.ensureMerchant(owner, owner);
        merchantOf.set(endpoint.id, owner);
        await query(
          `insert into webhook_endpoints (merchant_id, id, url, event_types, status, disabled_reason, secrets, created_at, updated_at)
           values ($1, $2, $3, '{}', $4, $5, $6::jsonb, now(), now())`,
          [owner, endpoint.id, endpoint.url, status, status === "disabled" ? "gone" : null, sealSecrets(secretBox, endpoint.id, endpoint.secrets)],
        );
      },
      async enqueue(delivery) {
        const merchantId = merchantOf.get(delivery.endpointId) ?? "mer_queue";
        await query(
          `insert into events (merchant_id, id, type, payment_intent_id, created_at, payload, body)
           values ($1, $2, $3, 'pi_queue', $4, '\\x', $5) on conflict do nothing`,
          [merchantId, delivery.eventId, delivery.eventType, delivery.createdAt, delivery.body],
        );
        await query(
          `insert into webhook_deliveries (merchant_id, id, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
           values ($1, $2, $3, $4, 'pending', $5, $6, $6)`,
          [merchantId, delivery.id, delivery.eventId, delivery.endpointId, delivery.nextAttemptAt ?? delivery.createdAt, delivery.createdAt],
        );
      },
      async delivery(id) {
        const { rows } = await query<{ status: "pending" | "succeeded" | "failed"; attempts: unknown; next_attempt_at: Date | null }>(
          "select status, attempts, next_attempt_at from webhook_deliveries where id = $1",
          [id],
        );
        const row = rows[0];
        return row && { status: row.status, attempts: parseAttempts(JSON.stringify(row.attempts)), nextAttemptAt: row.next_attempt_at };
      },
      async endpoint(id) {
        const { rows } = await query<{ status: "enabled" | "disabled"; disabled_reason: "gone" | "failing" | null; failing_since: Date | null }>(
          "select status, disabled_reason, failing_since from webhook_endpoints where id = $1",
          [id],
        );
        const row = rows[0];
        return row && { status: row.status, disabledReason: row.disabled_reason, failingSince: row.failing_since };
      },
      close: async () => {},
    };
  };

  describeDeliveryQueueContract("postgres", makeHarness);

  it("keeps the per-endpoint limit across many concurrent claims on several connections", async () => {
    const h = await makeHarness();
    const secrets = [{ secret: "whsec_c2VjcmV0", expiresAt: null }];
    await h.addEndpoint({ id: "we_a", url: "https://a.example.com/", secrets });
    await h.addEndpoint({ id: "we_b", url: "https://b.example.com/", secrets });
    for (let i = 0; i < 20; i++) {
      const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
      await h.enqueue({ id: `whd_${i}`, eventId: `evt_${i}`, eventType: "payment_intent.created", endpointId: i % 2 ? "we_a" : "we_b", body: "{}", createdAt });
    }
    const now = new Date(Date.UTC(2026, 0, 2));
    const rounds = await Promise.all(
      Array.from({ length: 8 }, (_, i) => stores.deliveryQueue.claim({ now, owner: `i${i}`, leaseMs: 60_000, limit: 3, perEndpointLimit: 2 })),
    );
    const claimed = rounds.flat();
    assert.equal(claimed.length, 4);
    assert.equal(claimed.filter((c) => c.endpoint.id === "we_a").length, 2);
    assert.equal(new Set(claimed.map((c) => c.deliveryId)).size, 4);
  });
});
