import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { adminQuery, createTestDatabase, postgresUnavailable, type TestDatabase } from "../support/postgres.js";
import { newApiKey, startPostgresApp, type PostgresApp } from "./support/postgres-app.js";
import { createTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";

const skip = await postgresUnavailable();

/** The statement timeout the app runs with; a request may never take much longer. */
const statementTimeoutMs = 1000;
const unavailableBody = { status: 503, title: "Service Unavailable", message: "the database is unavailable; retry later" };

interface Reply {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("PostgreSQL outages", { skip, timeout: 40_000 }, () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let app: PostgresApp;
  let rpc: Client<typeof PaymentIntentService>;
  /** merchantA's key used from the start, so it is verified (and cached) before any outage. */
  const key = newApiKey();
  /** Another key of merchantA, first used while the database is away: verifying it needs the database. */
  const unverifiedKey = newApiKey();
  let counter = 0;

  async function rest(method: string, path: string, body?: unknown, apiKey = key): Promise<Reply> {
    const started = performance.now();
    const res = await fetch(`${app.restUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
    const parsed = (await res.json()) as Record<string, unknown>;
    return { status: res.status, body: parsed, ms: performance.now() - started };
  }
  const create = (apiKey = key) =>
    rest("POST", "/v2/payment-intents", { amount: 5000, customerEmail: "ada@example.com", clientReference: `outage-${++counter}` }, apiKey);
  const list = () => rest("GET", "/v2/payment-intents?pageSize=5");

  /** assertServed: the request was served with the given status. */
  function assertServed(reply: Reply, status: number): void {
    assert.equal(reply.status, status, JSON.stringify(reply.body));
  }
  /** assertUnavailable: the exact 503 body, well before a client would give up. */
  function assertUnavailable(reply: Reply, what: string): void {
    assert.deepEqual({ status: reply.status, body: reply.body }, { status: 503, body: unavailableBody }, what);
    assert.ok(reply.ms < 3000, `${what} took ${Math.round(reply.ms)} ms`);
  }
  /**
   * untilServed retries a request (bounded) until it is served; every failed
   * attempt must be the 503, never a 500. Returns how many attempts it took.
   */
  async function untilServed(request: () => Promise<Reply>, status: number, attempts: number, pauseMs: number): Promise<number> {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const reply = await request();
      if (reply.status === status) return attempt;
      assertUnavailable(reply, `attempt ${attempt}`);
      await sleep(pauseMs);
    }
    assert.fail(`not served after ${attempts} attempts`);
  }

  before(async () => {
    db = await createTestDatabase();
    const direct = new URL(db.url);
    proxy = await createTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    app = await startPostgresApp({
      databaseUrl: viaProxy.toString(),
      keys: { merchantA: key },
      statementTimeoutMs,
      poolMax: 4,
    });
    await app.stores.apiKeys.addKey("merchantA", unverifiedKey);
    rpc = createClient(PaymentIntentService, createGrpcTransport({ baseUrl: app.url }));
    for (let i = 0; i < 3; i++) assertServed(await create(), 201);
    assertServed(await list(), 200);
  });
  after(async () => {
    // A pool that lost track of a connection never finishes closing: bound it.
    const closed = await Promise.race([app?.close().then(() => true), sleep(5000).then(() => false)]);
    await proxy?.stop();
    await db?.drop();
    assert.ok(closed, "the app's pool did not close within 5 s: a connection was never released");
  });

  it("keeps every pooled connection through repeated drops in the middle of requests", async () => {
    // Each round drops every connection while creates are on the wire, so
    // transactions fail at BEGIN, mid-way or at COMMIT. A connection the pool
    // never gets back is gone for good: more rounds than the pool has
    // connections would then leave none, and nothing would be served again.
    for (let round = 0; round < 6; round++) {
      const replies = Promise.all(Array.from({ length: 4 }, () => create()));
      await sleep(round % 3);
      proxy.cut();
      for (const reply of await replies) {
        if (reply.status !== 201) assertUnavailable(reply, `round ${round}`);
      }
    }
    await untilServed(create, 201, 5, 100);
    const served = await Promise.all(Array.from({ length: 8 }, () => create()));
    assert.deepEqual(
      served.map((r) => r.status),
      Array<number>(8).fill(201),
      JSON.stringify(served.filter((r) => r.status !== 201)),
    );
  });

  it("recovers when the database terminates the pool's connections", async () => {
    const terminated = await adminQuery(
      `select pg_terminate_backend(pid) as ok from pg_stat_activity
       where datname = $1 and application_name = 'payment-intents'`,
      [db.name],
    );
    assert.ok(terminated.rowCount! > 0, "the pool had connections to terminate");
    const createAttempts = await untilServed(create, 201, 5, 100);
    const listAttempts = await untilServed(list, 200, 5, 100);
    process.stdout.write(`# after pg_terminate_backend: create served on attempt ${createAttempts}, list on ${listAttempts}\n`);
  });

  it("answers 503 within the timeout while the database accepts but never answers, then recovers", async () => {
    proxy.freeze();
    try {
      const replies = await Promise.all([create(), list(), create(unverifiedKey)]);
      // statement_timeout cannot fire on a server that does not answer: the
      // client-side query and connect timeouts (statementTimeoutMs + 1 s) must.
      for (const [i, reply] of replies.entries()) {
        assert.deepEqual({ status: reply.status, body: reply.body }, { status: 503, body: unavailableBody }, `request ${i}`);
        assert.ok(reply.ms < statementTimeoutMs + 2500, `request ${i} took ${Math.round(reply.ms)} ms`);
      }
      process.stdout.write(`# database not answering: 503 after ${replies.map((r) => Math.round(r.ms)).join(", ")} ms\n`);
    } finally {
      proxy.thaw();
    }
    await untilServed(create, 201, 10, 250);
    assertServed(await list(), 200);
  });

  it("answers 503 quickly, and Unavailable over gRPC, while nothing listens at the database's address", async () => {
    await proxy.stop();
    assertUnavailable(await create(), "create");
    assertUnavailable(await list(), "list");
    assertUnavailable(await rest("GET", "/v2/payment-intents/pi_00000000-0000-7000-8000-000000000000"), "get");
    // A key not yet verified needs the database: that is a 503 too, not a 401.
    assertUnavailable(await create(unverifiedKey), "create with a key not verified yet");

    const started = performance.now();
    const error = await rpc
      .createPaymentIntent(
        { amount: 5000n, customerEmail: "ada@example.com", clientReference: `outage-rpc-${++counter}` },
        { headers: { authorization: `Bearer ${key}` }, timeoutMs: 10_000 },
      )
      .then(
        () => assert.fail("the call succeeded without a database"),
        (reason: unknown) => ConnectError.from(reason),
      );
    assert.equal(error.code, Code.Unavailable, `${Code[error.code]}: ${error.rawMessage}`);
    assert.equal(error.rawMessage, unavailableBody.message);
    assert.ok(performance.now() - started < 3000);
  });

  it("serves again, without a restart, once the database is back", async () => {
    await proxy.start();
    const attempts = await untilServed(create, 201, 20, 250);
    assertServed(await list(), 200);
    assertServed(await create(unverifiedKey), 201);
    const created = await rpc.createPaymentIntent(
      { amount: 5000n, customerEmail: "ada@example.com", clientReference: `outage-rpc-${++counter}` },
      { headers: { authorization: `Bearer ${key}` }, timeoutMs: 10_000 },
    );
    assert.match(created.id, /^pi_/);
    process.stdout.write(`# after the database came back: create served on attempt ${attempts}\n`);
  });
});
