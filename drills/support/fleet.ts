import { randomBytes } from "node:crypto";
import { runMigrations } from "../../src/store/postgres/migrate.js";
import { createTestDatabase, queryDatabase, type TestDatabase } from "../../test/support/postgres.js";
import { startServerProcess, type ServerProcess } from "../../test/support/server-process.js";
import { haproxyInstances, startDeployedHaproxy, type DeployedHaproxy, type ServerStats } from "./deployed-haproxy.js";
import { startDeployedPgBouncer, type DeployedPgBouncer } from "./deployed-pgbouncer.js";
import { freePort } from "../../test/support/ports.js";
import { newDrillKey } from "./process-target.js";

/** Settings every fleet instance runs with (README, "Running several instances"). */
export const fleetPoolMax = 5;
/** The default deadline (and with it the default DB_LOCK_TIMEOUT_MS of 2 s), set explicitly. */
export const fleetStatementTimeoutMs = 5000;

export interface FleetOptions {
  /** More settings for every instance (REDIS_URL, RATE_LIMIT_RPS, …). */
  env?: Record<string, string>;
  /** Merchants with a key each (default 1): a drill that needs fresh rate-limit windows uses one per phase. */
  merchants?: number;
}

/** A merchant the drills act as. */
export interface FleetMerchant {
  id: string;
  key: string;
}

/**
 * Fleet is the deployment of deploy/ running on this machine: a fresh
 * database migrated on a direct connection, PgBouncer from
 * deploy/pgbouncer.ini in front of it, three instances (src/main.ts) on fixed
 * ports through PgBouncer, and HAProxy from deploy/haproxy.cfg in front of
 * them.
 */
export interface Fleet {
  readonly db: TestDatabase;
  readonly pgbouncer: DeployedPgBouncer;
  readonly haproxy: DeployedHaproxy;
  /** merchants[0]. */
  readonly merchant: FleetMerchant;
  readonly merchants: readonly FleetMerchant[];
  /** Each instance's own URL (for probing /readyz beside HAProxy). */
  readonly instanceUrls: readonly string[];
  /** The running process of instance i, if it is running. */
  instance(i: number): ServerProcess | undefined;
  /** SIGKILL of instance i; resolves once it has exited. */
  kill(i: number): Promise<void>;
  /** Starts instance i again, on its port; resolves once it listens. */
  restart(i: number): Promise<void>;
  /** Waits until HAProxy has every instance of api_http in service. */
  waitAllUp(timeoutMs?: number): Promise<void>;
  /** Waits until no request is in flight or queued in HAProxy (after a load that left some behind). */
  settle(timeoutMs?: number): Promise<void>;
  /** HAProxy's UP → DOWN transitions so far, summed over the api_http servers (the gRPC ones track them). */
  downs(): Promise<number>;
  /** Client backends of the fleet's database now (pg_stat_activity), leaving out the drill's own sessions ("psql", as lock holders call themselves). */
  backends(): Promise<number>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** startFleet starts the whole deployment; close() stops every part and drops the database. */
export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const db = await createTestDatabase();
  const parts: { stop(): Promise<void> }[] = [];
  const processes: (ServerProcess | undefined)[] = [];
  const close = async () => {
    await Promise.all(processes.map((p) => p?.stop()));
    for (const part of parts.reverse()) await part.stop().catch(() => {});
    await db.drop();
  };
  try {
    // Migrations first, as a separate step on a direct connection.
    await runMigrations({ url: db.url });
    const direct = new URL(db.url);
    const pgbouncer = await startDeployedPgBouncer({
      target: { host: direct.hostname, port: Number(direct.port || 5432), database: db.name },
      user: decodeURIComponent(direct.username) || "postgres",
    });
    parts.push(pgbouncer);
    const ports = await Promise.all(Array.from({ length: haproxyInstances }, () => freePort()));
    const haproxy = await startDeployedHaproxy(ports.map((port) => `127.0.0.1:${port}`));
    parts.push(haproxy);

    const merchants = Array.from({ length: options.merchants ?? 1 }, (_, i) => ({ id: i === 0 ? "fleet" : `fleet${i}`, key: newDrillKey() }));
    const env: Record<string, string> = {
      MIGRATE_ON_START: "false",
      DB_POOL_MAX: String(fleetPoolMax),
      DB_STATEMENT_TIMEOUT_MS: String(fleetStatementTimeoutMs),
      // Behind HAProxy every connection comes from its address.
      MAX_CONNECTIONS: "4000",
      MAX_CONNECTIONS_PER_ADDRESS: "4000",
      // deploy/haproxy.cfg sends the PROXY protocol: each connection says whose it is.
      TRUSTED_PROXIES: "127.0.0.1",
      // Shared by every instance: page tokens and checkout forms work across them.
      PAGE_TOKEN_SECRET: randomBytes(32).toString("base64url"),
      CHECKOUT_SECRET: randomBytes(32).toString("base64url"),
      PUBLIC_URL: haproxy.httpUrl,
      RATE_LIMIT_RPS: "0",
      AUTH_FAILURES_PER_MINUTE: "0",
      ...options.env,
    };
    const start = async (i: number) => {
      processes[i] = await startServerProcess({
        databaseUrl: pgbouncer.url,
        apiKeys: merchants.map((m) => `${m.id}:${m.key}`).join(","),
        env: { ...env, PORT: String(ports[i]) },
      });
    };
    await Promise.all(ports.map((_, i) => start(i)));

    const downs = async () =>
      (await haproxy.stats()).filter((s: ServerStats) => s.backend === "api_http").reduce((sum, s) => sum + s.downs, 0);
    const fleet: Fleet = {
      db,
      pgbouncer,
      haproxy,
      merchant: merchants[0]!,
      merchants,
      instanceUrls: ports.map((port) => `http://127.0.0.1:${port}`),
      instance: (i) => processes[i],
      async kill(i) {
        const child = processes[i];
        if (!child) return;
        child.child.kill("SIGKILL");
        await child.exited;
        processes[i] = undefined;
      },
      restart: (i) => start(i),
      async waitAllUp(timeoutMs = 15_000) {
        const started = performance.now();
        while (performance.now() - started < timeoutMs) {
          const stats = (await haproxy.stats()).filter((s) => s.backend === "api_http");
          if (stats.length === haproxyInstances && stats.every((s) => s.status === "UP")) return;
          await sleep(100);
        }
        throw new Error(`HAProxy did not see every instance UP within ${timeoutMs} ms: ${JSON.stringify(await haproxy.stats())}`);
      },
      downs,
      async settle(timeoutMs = 15_000) {
        const started = performance.now();
        while (performance.now() - started < timeoutMs) {
          const stats = await haproxy.stats();
          if (stats.every((s) => s.current === 0 && s.queued === 0)) return;
          await sleep(200);
        }
      },
      async backends() {
        const { rows } = await queryDatabase<{ n: string }>(
          db.url,
          `select count(*) as n from pg_stat_activity
           where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid() and application_name <> 'psql'`,
          [db.name],
        );
        return Number(rows[0]!.n);
      },
      close,
    };
    await fleet.waitAllUp();
    return fleet;
  } catch (error) {
    await close();
    throw error;
  }
}
