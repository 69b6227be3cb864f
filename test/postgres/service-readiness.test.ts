import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/health/v1/health_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { readConfig } from "../../src/config.js";
import type { Logger } from "../../src/lib/logger.js";
import { composeService, type RunningService } from "../../src/server/compose-service.js";
import { expectConnectError } from "../rpc/support/rpc-helpers.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { pgBouncerUnavailable, startPgBouncer, type PgBouncer } from "./support/pgbouncer.js";
import { createTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";

const skip = (await postgresUnavailable()) ?? pgBouncerUnavailable();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const unreadyAfterMs = 2000;

interface ReadyBody {
  status: number;
  message: string;
  detail: {
    state: string;
    store: { kind: string; reachable: boolean; pool: { max: number }; pendingMigrations: string[]; lastFailure?: { reason: string } };
    databaseSettings: { mismatches: { setting: string; expected: string; actual: string }[]; preparedStatements: { usable: boolean } };
    rateLimits: { backend: string };
  };
}

/**
 * The whole service (composeService, as main.ts runs it) on PostgreSQL behind a
 * real PgBouncer in transaction pooling, behind a TCP proxy the test stops:
 * a database outage every instance would share.
 */
describe("the service behind PgBouncer: readiness, its detail and the 503s of an outage", { skip, timeout: 120_000 }, () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let bouncer: PgBouncer;
  let service: RunningService;
  const key = `sk_test_${randomBytes(18).toString("base64url")}`;
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  const logger: Logger = {
    info: (fields, message) => lines.push({ fields, message }),
    warn: (fields, message) => lines.push({ fields, message }),
    error: (fields, message) => lines.push({ fields, message }),
  };
  const readyz = async () => {
    const res = await fetch(`${service.server.url}/readyz`);
    return { status: res.status, body: (await res.json()) as ReadyBody };
  };
  const metric = async (name: string) => {
    const text = await (await fetch(`${service.server.url}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
  };

  before(async () => {
    db = await createTestDatabase();
    // Migrations first, on a direct connection; the service does not migrate.
    const stores = await openMigratedStores(db.url, { poolMax: 1 });
    await stores.close();
    // A database default the service's transactions must not run with.
    await queryDatabase(db.url, `alter database ${db.name} set default_transaction_isolation = 'repeatable read'`);
    const direct = new URL(db.url);
    proxy = await createTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    bouncer = await startPgBouncer({ target: { host: "127.0.0.1", port: proxy.port }, poolSize: 4, users: ["postgres"] });
    const config = readConfig({
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL: bouncer.urlFor(db.url),
      MIGRATE_ON_START: "false",
      DB_POOL_MAX: "3",
      DB_STATEMENT_TIMEOUT_MS: "1000",
      DB_UNREADY_AFTER_MS: String(unreadyAfterMs),
      API_KEYS: `merchantA:${key}`,
      RATE_LIMIT_RPS: "0",
      LOG_LEVEL: "silent",
    });
    service = await composeService(config, { logger });
  });
  after(async () => {
    await service?.server.close({ graceMs: 0 });
    await service?.closeStores();
    await bouncer?.stop();
    await proxy?.stop();
    await db?.drop();
  });

  it("reports in /readyz detail and the log the settings that differ, the pool and the rate-limit backend", async () => {
    const { status, body } = await readyz();
    assert.equal(status, 200);
    assert.equal(body.message, "ready");
    assert.equal(body.detail.state, "ready");
    assert.deepEqual(
      body.detail.databaseSettings.mismatches.map(({ setting, expected, actual }) => ({ setting, expected, actual })),
      [{ setting: "transaction_isolation", expected: "read committed", actual: "repeatable read" }],
    );
    assert.equal(body.detail.databaseSettings.preparedStatements.usable, false);
    assert.deepEqual(body.detail.rateLimits, { backend: "memory" });
    assert.equal(body.detail.store.kind, "postgres");
    assert.equal(body.detail.store.reachable, true);
    assert.equal(body.detail.store.pool.max, 3);
    assert.deepEqual(body.detail.store.pendingMigrations, []);
    const logged = lines.find((line) => line.message === "database settings differ from the configuration");
    assert.match(String((logged?.fields.findings as string[] | undefined)?.[0]), /^transaction_isolation is "repeatable read"/);
  });

  it("answers an outage 503 with Retry-After on REST, Connect and gRPC, stays ready for the grace, then recovers alone", async () => {
    const auth = { authorization: `Bearer ${key}` };
    const create = { amount: 5000, customerEmail: "ada@example.com", clientReference: `outage-${randomBytes(4).toString("hex")}` };
    const connect = createClient(PaymentIntentService, createConnectTransport({ baseUrl: service.server.url, httpVersion: "1.1" }));
    const grpc = createClient(PaymentIntentService, createGrpcTransport({ baseUrl: service.server.url }));
    const health = createClient(Health, createGrpcTransport({ baseUrl: service.server.url }));
    assert.equal(await metric("payments_database_reachable"), 1);

    await proxy.stop();
    const goneAt = performance.now();
    try {
      const res = await fetch(`${service.server.url}/v1/v2/payment-intents`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify(create),
      });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("retry-after"), "1");
      assert.deepEqual(await res.json(), { status: 503, title: "Service Unavailable", message: "the database is unavailable; retry later" });
      for (const [name, client] of [["Connect", connect], ["gRPC", grpc]] as const) {
        const error = await expectConnectError(
          client.createPaymentIntent({ ...create, amount: 5000n }, { headers: auth }),
          Code.Unavailable,
          "the database is unavailable; retry later",
        );
        assert.equal(error.metadata.get("retry-after"), "1", name);
      }

      // Within the grace: in the balancer, the database's state in the detail and the metrics.
      const within = await readyz();
      assert.ok(performance.now() - goneAt < unreadyAfterMs, "the calls above took the whole grace");
      assert.equal(within.status, 200);
      assert.equal(within.body.detail.store.reachable, false);
      assert.ok(within.body.detail.store.lastFailure?.reason);
      assert.equal((await health.check({ service: "" })).status, HealthCheckResponse_ServingStatus.SERVING);
      assert.equal(await metric("payments_database_reachable"), 0);
      assert.equal(await metric("payments_ready"), 1);

      // Past the grace, counted from the first failure (through PgBouncer: the deadline of the first call).
      let past = await readyz();
      while (past.status === 200 && performance.now() - goneAt < unreadyAfterMs + 4000) {
        await sleep(100);
        past = await readyz();
      }
      assert.equal(past.status, 503);
      assert.ok(performance.now() - goneAt >= unreadyAfterMs, "not ready before the grace had passed");
      assert.equal(past.body.message, "the store has been unreachable for longer than 2 s");
      assert.equal((await health.check({ service: "" })).status, HealthCheckResponse_ServingStatus.NOT_SERVING);
      assert.equal(await metric("payments_ready"), 0);
      assert.ok((await metric("payments_database_unreachable_seconds")) >= unreadyAfterMs / 1000);
    } finally {
      await proxy.start();
    }
    // Nothing but the probes asks the database: the instance comes back by itself.
    const back = performance.now();
    let status = 503;
    while (status !== 200 && performance.now() - back < 8000) {
      await sleep(200);
      status = (await readyz()).status;
    }
    assert.equal(status, 200, "not ready again within 8 s of the database's return");
    assert.ok(lines.some((line) => line.message === "the database answers again"));
  });
});
