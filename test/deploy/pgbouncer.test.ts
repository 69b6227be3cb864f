import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { pgBouncerIniPath, pgBouncerMissing, renderIni, startDeployedPgBouncer, type DeployedPgBouncer } from "../../drills/support/deployed-pgbouncer.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createTcpProxy, type TcpProxy } from "../postgres/support/tcp-proxy.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, type TestDatabase } from "../support/postgres.js";

const skip = (await postgresUnavailable()) ?? pgBouncerMissing();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("renderIni", () => {
  it("replaces settings by section and key, and keeps the rest as written", () => {
    const template = "; a comment\n[databases]\npayments = host=a port=1\n[pgbouncer]\nlisten_port = 6432\n; listen_port = 1\npool_mode = transaction\n";
    assert.equal(
      renderIni(template, { databases: { payments: "host=b port=2" }, pgbouncer: { listen_port: "7000" } }),
      "; a comment\n[databases]\npayments = host=b port=2\n[pgbouncer]\nlisten_port = 7000\n; listen_port = 1\npool_mode = transaction\n",
    );
  });

  it("refuses a setting the template does not have, so the drills run what is committed", () => {
    assert.throws(() => renderIni("[pgbouncer]\nlisten_port = 6432\n", { pgbouncer: { pool_mode: "session" } }), /not in the template: pgbouncer.pool_mode/);
  });
});

describe("deploy/pgbouncer.ini, run with only its CHANGE lines replaced", { skip, timeout: 60_000 }, () => {
  let db: TestDatabase;
  /** PostgreSQL as PgBouncer sees it: through a proxy the test can stop, so the shared server never restarts. */
  let proxy: TcpProxy;
  let bouncer: DeployedPgBouncer;
  let stores: PostgresStores;

  before(async () => {
    db = await createTestDatabase();
    // Migrations as a separate step, on a direct connection.
    await (await openMigratedStores(db.url, { poolMax: 1 })).close();
    const direct = new URL(db.url);
    proxy = await createTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    bouncer = await startDeployedPgBouncer({ target: { host: "127.0.0.1", port: proxy.port, database: db.name }, user: "postgres" });
    stores = await openMigratedStores(bouncer.url, { poolMax: 3, statementTimeoutMs: 1000, migrate: false });
  });
  after(async () => {
    await stores?.close();
    await bouncer?.stop();
    await proxy?.stop();
    await db?.drop();
  });

  it("pools in transaction mode and lets the service's per-transaction deadline through, with nothing to ignore at start-up", async () => {
    const report = await stores.checkSettings();
    assert.deepEqual(report.mismatches, []);
    assert.equal(report.preparedStatements.usable, false, report.preparedStatements.reason);
    const committed = readFileSync(pgBouncerIniPath, "utf8");
    assert.match(committed, /^pool_mode = transaction$/m);
    assert.match(committed, /^ignore_startup_parameters =\s*$/m);
    await stores.apiKeys.ensureMerchant("merchantA", "A");
    assert.equal(await stores.merchants.nameOf("merchantA"), "A");
  });

  it("logs in to PostgreSQL again within about a second of its return (server_login_retry = 1; the default 15 s held errors for 16.5 s)", async () => {
    const admin = new pg.Client({ connectionString: bouncer.url.replace(/\/payments$/, "/pgbouncer") });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ key: string; value: string }>("show config");
      assert.equal(rows.find((row) => row.key === "server_login_retry")?.value, "1");
    } finally {
      await admin.end();
    }

    await proxy.stop();
    // Every server connection is gone; the next call fails, and so does PgBouncer's login.
    await assert.rejects(stores.merchants.nameOf("merchantA"));
    await sleep(1500);
    await proxy.start();
    const back = performance.now();
    let served = false;
    while (!served && performance.now() - back < 10_000) {
      served = await stores.merchants.nameOf("merchantA").then(
        () => true,
        () => false,
      );
      if (!served) await sleep(50);
    }
    const ms = performance.now() - back;
    process.stdout.write(`# PgBouncer served again ${Math.round(ms)} ms after PostgreSQL returned\n`);
    assert.ok(served && ms < 2500, `served again after ${Math.round(ms)} ms`);
  });
});
