import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import pg from "pg";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { createDatabase, type Database } from "../../src/store/postgres/database.js";
import { unavailableMessage } from "../../src/store/postgres/database-errors.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { adminQuery, createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { pgBouncerUnavailable, startPgBouncer, type PgBouncer } from "./support/pgbouncer.js";
import { createLiveIntents } from "./support/live-intents.js";

const skip = await postgresUnavailable();
const noBouncer = skip ?? pgBouncerUnavailable();

const statementTimeoutMs = 1000;
const lockTimeoutMs = 500;
const poolMax = 3;
const clock = createSystemClock();
const ids = createIdGenerator(clock);
const liveIntent = createLiveIntents(clock, ids);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const intentOf = (merchantId: string, clientReference: string) => liveIntent({ merchantId, clientReference });

/** Runs call and returns how long it took to fail with the "database unavailable" 503. */
async function timeUnavailable(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await assert.rejects(call(), (error: unknown) => {
    assert.ok(error instanceof ConnectError, String(error));
    assert.equal(error.code, Code.Unavailable, error.rawMessage);
    assert.equal(error.rawMessage, unavailableMessage);
    return true;
  });
  return performance.now() - started;
}

/** A session of its own that holds locks until released. */
async function lockHolder(url: string, statements: string[], params: unknown[][] = []): Promise<{ pid: number; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("begin");
  for (const [i, text] of statements.entries()) await client.query(text, params[i] ?? []);
  const pid = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
  return {
    pid,
    release: async () => {
      await client.query("rollback");
      await client.end();
    },
  };
}

describe("store deadlines", { skip, timeout: 120_000 }, () => {
  let db: TestDatabase;
  let bouncer: PgBouncer | undefined;

  before(async () => {
    db = await createTestDatabase();
    const stores = await openMigratedStores(db.url, { poolMax: 1 });
    await stores.apiKeys.ensureMerchant("merchantA", "A");
    await stores.close();
    // A statement that outlives its statement_timeout: it catches the first
    // cancel and sleeps on. Only a second cancel (the client's backstop)
    // ends it; without one it would run its whole time after the client left.
    await queryDatabase(
      db.url,
      `create function stubborn_sleep(seconds float8) returns void language plpgsql as $$
       begin
         perform pg_sleep(seconds);
       exception when query_canceled then
         perform pg_sleep(seconds);
       end $$`,
    );
    if (!noBouncer) {
      const direct = new URL(db.url);
      bouncer = await startPgBouncer({
        target: { host: direct.hostname, port: Number(direct.port || 5432) },
        poolSize: poolMax + 1,
        users: ["postgres"],
      });
    }
  });
  after(async () => {
    await bouncer?.stop();
    await db?.drop();
  });

  const paths = [
    { name: "direct", skip: skip, url: () => db.url },
    { name: "through PgBouncer in transaction pooling", skip: noBouncer, url: () => bouncer!.urlFor(db.url) },
  ];

  for (const path of paths) {
    describe(path.name, { skip: path.skip }, () => {
      let stores: PostgresStores;
      let database: Database;
      before(async () => {
        stores = await openMigratedStores(path.url(), { poolMax, statementTimeoutMs, lockTimeoutMs, migrate: false });
        database = createDatabase({ url: path.url(), poolMax: 2, statementTimeoutMs, lockTimeoutMs });
      });
      after(async () => {
        await stores?.close();
        await database?.close();
      });

      it("gives up on a row another session holds at the lock timeout, and commits nothing later", async () => {
        const stored = intentOf("merchantA", `row-lock-${path.name.length}-${randomBytes(3).toString("hex")}`);
        assert.equal((await stores.intents.insert(stored)).inserted, true);
        const holder = await lockHolder(db.url, ["select 1 from payment_intents where id = $1 for update"], [[stored.id]]);
        let cancelMs: number;
        let transitionMs: number;
        try {
          cancelMs = await timeUnavailable(() => stores.intents.cancel("merchantA", stored.id, clock.now()));
          transitionMs = await timeUnavailable(() =>
            stores.intents.transition("merchantA", stored.id, { from: "pending", to: "expired", at: clock.now() }),
          );
        } finally {
          await holder.release();
        }
        process.stdout.write(`# ${path.name}: row lock: cancel gave up after ${Math.round(cancelMs)} ms, transition after ${Math.round(transitionMs)} ms\n`);
        for (const ms of [cancelMs, transitionMs]) {
          assert.ok(ms >= lockTimeoutMs * 0.9, `gave up after ${Math.round(ms)} ms, before the lock timeout`);
          assert.ok(ms <= statementTimeoutMs * 1.1, `gave up after ${Math.round(ms)} ms`);
        }
        await sleep(300);
        assert.deepEqual(await stores.intents.findById("merchantA", stored.id), stored);
      });

      it("answers creates and lists Unavailable within the deadline under a table lock, within the pool, committing nothing later", async () => {
        const holder = await lockHolder(db.url, ["lock table payment_intents in access exclusive mode"]);
        const references = Array.from({ length: 3 * poolMax }, (_, i) => `table-lock-${i}-${randomBytes(3).toString("hex")}`);
        let times: number[];
        let backends: number;
        try {
          const calls = [
            ...references.map((reference) => timeUnavailable(() => stores.intents.insert(intentOf("merchantA", reference)))),
            ...Array.from({ length: poolMax }, () => timeUnavailable(() => stores.intents.list({ livemode: false, merchantId: "merchantA", limit: 50, now: clock.now() }))),
          ];
          await sleep(statementTimeoutMs / 2);
          const { rows } = await adminQuery<{ n: string }>(
            `select count(*) as n from pg_stat_activity
             where datname = $1 and backend_type = 'client backend' and pid <> $2 and pid <> pg_backend_pid()`,
            [db.name, holder.pid],
          );
          backends = Number(rows[0]!.n);
          times = await Promise.all(calls);
        } finally {
          await holder.release();
        }
        process.stdout.write(
          `# ${path.name}: table lock: ${times.length} calls answered 503 after ${Math.round(Math.min(...times))}–${Math.round(Math.max(...times))} ms; ${backends} backends\n`,
        );
        for (const ms of times) assert.ok(ms <= statementTimeoutMs * 1.1 + 50, `answered after ${Math.round(ms)} ms`);
        // The stores' pool, PgBouncer's pool, and the second pool of this describe.
        assert.ok(backends <= poolMax + 2, `${backends} backends for a pool of ${poolMax}`);
        await sleep(500);
        const { rows } = await queryDatabase<{ n: string }>(db.url, "select count(*) as n from payment_intents where client_reference = any($1)", [
          references,
        ]);
        assert.equal(rows[0]!.n, "0");
      });

      it("cancels an abandoned statement in PostgreSQL instead of leaving it running", async () => {
        const started = performance.now();
        await timeUnavailable(() => database.run(false, [{ text: "select stubborn_sleep(5)", values: [] }]));
        const answeredMs = performance.now() - started;
        // The server's timeout fired at the deadline and was caught; the
        // client's backstop (deadline + 250 ms) cancelled it again.
        assert.ok(answeredMs < statementTimeoutMs + 1000, `answered after ${Math.round(answeredMs)} ms`);
        let running = 1;
        for (let i = 0; i < 20 && running > 0; i++) {
          await sleep(100);
          const { rows } = await adminQuery<{ n: string }>(
            `select count(*) as n from pg_stat_activity where datname = $1 and state = 'active' and query like 'select stubborn_sleep%'`,
            [db.name],
          );
          running = Number(rows[0]!.n);
        }
        process.stdout.write(`# ${path.name}: abandoned statement: answered after ${Math.round(answeredMs)} ms, running in PostgreSQL: ${running}\n`);
        assert.equal(running, 0, "the statement kept running after the client gave up");
      });

      it("runs every statement with the configured deadline in its transaction", async () => {
        let sent: { statementTimeoutMs: number; lockTimeoutMs: number } | undefined;
        const [result] = await database.run(
          false,
          [{ text: "select setting from pg_settings where name in ('statement_timeout', 'lock_timeout') order by name desc", values: [] }],
          (session) => (sent = session.deadline),
        );
        assert.deepEqual(result!.rows, [[String(sent!.statementTimeoutMs)], [String(sent!.lockTimeoutMs)]]);
        assert.ok(sent!.statementTimeoutMs > statementTimeoutMs - 100 && sent!.statementTimeoutMs <= statementTimeoutMs);
        assert.equal(sent!.lockTimeoutMs, lockTimeoutMs);
        const report = await stores.checkSettings();
        assert.deepEqual(report.mismatches, []);
        assert.equal(report.preparedStatements.usable, path.name === "direct", report.preparedStatements.reason);
      });
    });
  }

  it("leaves no setting behind on a server connection PgBouncer hands to the next client", { skip: noBouncer }, async () => {
    const direct = new URL(db.url);
    // One server connection: whoever comes next gets the one the store used.
    const single = await startPgBouncer({ target: { host: direct.hostname, port: Number(direct.port || 5432) }, poolSize: 1, users: ["postgres"] });
    const database = createDatabase({ url: single.urlFor(db.url), poolMax: 1, statementTimeoutMs, lockTimeoutMs });
    const plain = new pg.Client({ connectionString: single.urlFor(db.url) });
    try {
      const [inside] = await database.run(false, [{ text: "select current_setting('lock_timeout'), pg_backend_pid()", values: [] }]);
      await plain.connect();
      const outside = await plain.query<{ lock_timeout: string; statement_timeout: string; pid: number }>(
        "select current_setting('lock_timeout') as lock_timeout, current_setting('statement_timeout') as statement_timeout, pg_backend_pid() as pid",
      );
      assert.equal(inside!.rows[0]![0], `${lockTimeoutMs}ms`);
      assert.equal(String(outside.rows[0]!.pid), inside!.rows[0]![1], "the same server connection");
      assert.deepEqual({ ...outside.rows[0], pid: 0 }, { lock_timeout: "0", statement_timeout: "0", pid: 0 });
    } finally {
      await plain.end().catch(() => {});
      await database.close();
      await single.stop();
    }
  });

  it("reports a role-level setting that differs, and keeps its own deadline over a role's statement_timeout", async () => {
    const role = `test_role_${randomBytes(4).toString("hex")}`;
    await adminQuery(`create role ${role} login`);
    try {
      await adminQuery(`alter role ${role} set default_transaction_isolation = 'serializable'`);
      await adminQuery(`alter role ${role} set statement_timeout = '7s'`);
      const asRole = new URL(db.url);
      asRole.username = role;
      const stores = await openMigratedStores(asRole.toString(), { poolMax: 1, statementTimeoutMs, lockTimeoutMs, migrate: false });
      try {
        const report = await stores.checkSettings();
        assert.deepEqual(
          report.mismatches.map((m) => [m.setting, m.expected, m.actual]),
          [["transaction_isolation", "read committed", "serializable"]],
        );
      } finally {
        await stores.close();
      }
    } finally {
      await adminQuery(`drop role ${role}`).catch(async () => {
        await db.drop();
        await adminQuery(`drop role ${role}`);
      });
    }
  });
});
