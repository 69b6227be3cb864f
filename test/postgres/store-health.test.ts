import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import pg from "pg";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { createReadiness } from "../../src/observability/readiness.js";
import { createMigrationOrm } from "../../src/store/postgres/create-orm.js";
import { runMigrations } from "../../src/store/postgres/migrate.js";
import { migrations } from "../../src/store/postgres/migrations/index.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { openPostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, type TestDatabase } from "../support/postgres.js";
import { pgBouncerUnavailable, startPgBouncer, type PgBouncer } from "./support/pgbouncer.js";
import { createTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";
import { createLiveIntents } from "./support/live-intents.js";

const skip = await postgresUnavailable();
const noBouncer = skip ?? pgBouncerUnavailable();

const statementTimeoutMs = 1000;
const lockTimeoutMs = 500;
const poolMax = 2;
const graceMs = 1500;
const clock = createSystemClock();
const ids = createIdGenerator(clock);
const liveIntent = createLiveIntents(clock, ids);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const intentOf = (clientReference: string) => liveIntent({ clientReference });

/** Expects the store's 503: Unavailable, with Retry-After for the client. */
async function expectUnavailable(call: Promise<unknown>): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof ConnectError, String(error));
    assert.equal(error.code, Code.Unavailable, error.rawMessage);
    assert.equal(error.metadata.get("retry-after"), "1");
    return true;
  });
}

/** A session of its own that holds a lock until released. */
async function lockHolder(url: string, statement: string, params: unknown[] = []): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("begin");
  await client.query(statement, params);
  return async () => {
    await client.query("rollback");
    await client.end();
  };
}

/** Polls until check() holds, or fails after timeoutMs. */
async function eventually(what: string, check: () => boolean, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > timeoutMs) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
  return performance.now() - started;
}

describe("PostgreSQL store health: readiness from the pool's own state", { skip, timeout: 120_000 }, () => {
  let db: TestDatabase;
  /** PostgreSQL as the service sees it: through a proxy the test can stop, so the shared server never restarts. */
  let proxy: TcpProxy;
  let bouncer: PgBouncer | undefined;

  before(async () => {
    db = await createTestDatabase();
    const stores = await openMigratedStores(db.url, { poolMax: 1 });
    await stores.apiKeys.ensureMerchant("merchantA", "A");
    await stores.close();
    const direct = new URL(db.url);
    proxy = await createTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    if (!noBouncer) {
      bouncer = await startPgBouncer({ target: { host: "127.0.0.1", port: proxy.port }, poolSize: poolMax + 1, users: ["postgres"] });
    }
  });
  after(async () => {
    await bouncer?.stop();
    await proxy?.stop();
    await db?.drop();
  });

  const viaProxy = () => {
    const url = new URL(db.url);
    url.port = String(proxy.port);
    return url.toString();
  };
  const paths = [
    { name: "direct", skip, url: viaProxy },
    { name: "through PgBouncer in transaction pooling", skip: noBouncer, url: () => bouncer!.urlFor(viaProxy()) },
  ];

  for (const path of paths) {
    describe(path.name, { skip: path.skip }, () => {
      let stores: PostgresStores;
      before(async () => {
        stores = await openMigratedStores(path.url(), { poolMax, statementTimeoutMs, lockTimeoutMs, migrate: false });
      });
      after(() => stores?.close());

      it("stays reachable and ready under a row lock, a table lock and a full pool, whose writes answer 503 with Retry-After", async () => {
        const readiness = createReadiness({ store: stores.health, unreachableGraceMs: graceMs });
        const stored = intentOf(`locked-${randomBytes(4).toString("hex")}`);
        assert.equal((await stores.intents.insert(stored)).inserted, true);
        const verdicts: boolean[] = [];
        const watch = setInterval(() => verdicts.push(readiness.check().ready && stores.health.state().reachable), 50);
        try {
          const releaseRow = await lockHolder(db.url, "select 1 from payment_intents where id = $1 for update", [stored.id]);
          try {
            await expectUnavailable(stores.intents.cancel("merchantA", stored.id, clock.now()));
          } finally {
            await releaseRow();
          }
          const releaseTable = await lockHolder(db.url, "lock table payment_intents in access exclusive mode");
          try {
            // Three times the pool: most wait for a connection and give up at the deadline, having sent nothing.
            await Promise.all(Array.from({ length: 3 * poolMax }, (_, i) => expectUnavailable(stores.intents.insert(intentOf(`table-${i}-${randomBytes(3).toString("hex")}`)))));
            // Past the grace, still under the lock.
            await Promise.all(Array.from({ length: 2 * poolMax }, (_, i) => expectUnavailable(stores.intents.insert(intentOf(`later-${i}-${randomBytes(3).toString("hex")}`)))));
          } finally {
            await releaseTable();
          }
        } finally {
          clearInterval(watch);
        }
        const state = stores.health.state();
        assert.ok(verdicts.length > 20, `${verdicts.length} checks`);
        assert.deepEqual(verdicts.filter((ok) => !ok).length, 0, "readiness flipped under a lock or a full pool");
        assert.equal(state.reachable, true);
        assert.ok(state.pool!.saturatedCalls > 0, "no call waited for a full pool");
        assert.equal(state.pool!.max, poolMax);
        assert.ok(state.lastAnsweredAt instanceof Date);
      });

      it("is unreachable once the database is gone, not ready past the grace only, and ready again by itself without traffic", async () => {
        const readiness = createReadiness({ store: stores.health, unreachableGraceMs: graceMs, probeIntervalMs: 200 });
        assert.equal(readiness.check().ready, true);
        await proxy.stop();
        const goneAt = performance.now();
        try {
          // One request finds the database gone (through PgBouncer: no answer within the deadline).
          await expectUnavailable(stores.intents.findById("merchantA", "pi_none"));
          const state = stores.health.state();
          assert.equal(state.reachable, false);
          assert.match(state.lastFailure!.reason, /^(the connection failed \(ECONNREFUSED\)|no answer within the deadline|the server ended the session \(SQLSTATE 08P01\)|the connection was closed)$/);
          assert.equal(readiness.check().ready, true, "not ready within the grace");
          await eventually("not ready", () => !readiness.check().ready, graceMs + 3000);
          const sinceGone = performance.now() - goneAt;
          assert.ok(sinceGone >= graceMs, `not ready ${Math.round(sinceGone)} ms after the database went, before the grace`);
          process.stdout.write(`# ${path.name}: not ready ${Math.round(sinceGone)} ms after the database went (grace ${graceMs} ms)\n`);
          const verdict = readiness.check();
          assert.equal(!verdict.ready && verdict.reason, "the store has been unreachable for longer than 1.5 s");
        } finally {
          await proxy.start();
        }
        // No store call from here on but readiness's own probes.
        const readyAfter = await eventually("ready again", () => readiness.check().ready, 5000);
        process.stdout.write(`# ${path.name}: ready again ${Math.round(readyAfter)} ms after the database returned\n`);
        assert.equal(stores.health.state().reachable, true);
      });
    });
  }

  describe("migrations", { skip }, () => {
    it("holds an instance that does not migrate back while the database lacks a migration, and lets it in once applied", async () => {
      const target = await createTestDatabase();
      let stores: PostgresStores | undefined;
      try {
        await runMigrations({ url: target.url });
        const orm = await createMigrationOrm({ url: target.url });
        try {
          await orm.migrator.down();
        } finally {
          await orm.close(true);
        }
        const last = migrations.at(-1)!.name;
        const url = bouncer ? bouncer.urlFor(target.url) : target.url;
        stores = await openPostgresStores({ url, poolMax, statementTimeoutMs, lockTimeoutMs, migrate: false, clock, ids, migrationCheckMs: 200 });
        const readiness = createReadiness({ store: stores.health });
        assert.deepEqual(stores.health.state().pendingMigrations, [last]);
        const verdict = readiness.check();
        assert.equal(!verdict.ready && verdict.reason, "database migrations are pending: apply them (npm run db:migrate)");
        // The separate deploy step, on a direct connection.
        assert.deepEqual(await runMigrations({ url: target.url }), [last]);
        await eventually("ready after the migration", () => readiness.check().ready, 3000);
        assert.deepEqual(stores.health.state().pendingMigrations, []);
      } finally {
        await stores?.close();
        await target.drop();
      }
    });

    it("counts every migration pending on a database never migrated", async () => {
      const target = await createTestDatabase();
      try {
        const stores = await openPostgresStores({ url: target.url, poolMax: 1, statementTimeoutMs, lockTimeoutMs, migrate: false, clock, ids });
        try {
          assert.deepEqual(stores.health.state().pendingMigrations, migrations.map((m) => m.name));
        } finally {
          await stores.close();
        }
      } finally {
        await target.drop();
      }
    });
  });
});
