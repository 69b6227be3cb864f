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
/** A write whose commit was sent but never confirmed: it may have happened, and a retry of the same request is safe. */
const unknownOutcomeBody = {
  status: 503,
  title: "Service Unavailable",
  message: "the database did not confirm the write; retry the same request: it is safe",
};

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
  const createBody = (clientReference = `outage-${++counter}`) => ({ amount: 5000, customerEmail: "ada@example.com", clientReference });
  const create = (apiKey = key, body = createBody()) => rest("POST", "/v2/payment-intents", body, apiKey);
  const list = () => rest("GET", "/v2/payment-intents?pageSize=5");

  /** assertServed: the request was served with the given status. */
  function assertServed(reply: Reply, status: number): void {
    assert.equal(reply.status, status, JSON.stringify(reply.body));
  }
  /**
   * assertUnavailable: the exact 503 body, well before a client would give up.
   * A read can only be "unavailable"; a write may also be "outcome unknown"
   * when the connection broke after its commit was sent.
   */
  function assertUnavailable(reply: Reply, what: string, kind: "read" | "write" = "read"): void {
    const allowed = kind === "read" ? [unavailableBody] : [unavailableBody, unknownOutcomeBody];
    assert.ok(
      reply.status === 503 && allowed.some((body) => JSON.stringify(body) === JSON.stringify(reply.body)),
      `${what}: ${reply.status} ${JSON.stringify(reply.body)}`,
    );
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
      assertUnavailable(reply, `attempt ${attempt}`, "write");
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
    await app.stores.enrollment.enroll({ merchantId: "merchantA", name: "merchantA", key: unverifiedKey });
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
    const unconfirmed: ReturnType<typeof createBody>[] = [];
    for (let round = 0; round < 6; round++) {
      const bodies = Array.from({ length: 4 }, () => createBody());
      const replies = Promise.all(bodies.map((body) => create(key, body)));
      await sleep(round % 3);
      proxy.cut();
      for (const [i, reply] of (await replies).entries()) {
        if (reply.status === 201) continue;
        assertUnavailable(reply, `round ${round}`, "write");
        if (reply.body.message === unknownOutcomeBody.message) unconfirmed.push(bodies[i]!);
      }
    }
    await untilServed(create, 201, 5, 100);
    // A create whose outcome was unknown converges when retried: 201 if it
    // never happened, 200 (the stored intent, replayed) if it did; never two.
    for (const body of unconfirmed) {
      const retried = await create(key, body);
      assert.ok(retried.status === 201 || retried.status === 200, `retry of ${body.clientReference}: ${JSON.stringify(retried.body)}`);
      assert.equal(retried.body.clientReference, body.clientReference);
    }
    process.stdout.write(`# connection cuts: ${unconfirmed.length} creates answered "did not confirm", each converged on retry\n`);
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
      // client's backstop (the deadline plus 250 ms) cancels and drops the
      // connection. The create was sent, so its outcome is unknown; the list
      // expires lapsed intents first (a write, in today's service); the key
      // never verified needs a read that never came back.
      const kinds = ["write", "write", "read"] as const;
      for (const [i, reply] of replies.entries()) {
        assertUnavailable(reply, `request ${i}`, kinds[i]);
        assert.ok(reply.ms < statementTimeoutMs + 1000, `request ${i} took ${Math.round(reply.ms)} ms`);
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
    // The first write may go out on a pooled connection the proxy has just
    // cut, before the pool notices: the client cannot tell that from a reply
    // lost after the commit, so it says the outcome is unknown.
    assertUnavailable(await create(), "create", "write");
    assertUnavailable(await list(), "list", "write");
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
    assert.ok([unavailableBody.message, unknownOutcomeBody.message].includes(error.rawMessage), error.rawMessage);
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
