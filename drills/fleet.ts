import { redisUnavailable, randomPrefix, testRedisUrl } from "../test/support/redis.js";
import type { DrillReport } from "./support/drill-report.js";
import { haproxyMissing } from "./support/deployed-haproxy.js";
import { pgBouncerMissing } from "./support/deployed-pgbouncer.js";
import { startFleet, type Fleet } from "./support/fleet.js";
import { runDuplicateCreates } from "./fleet/duplicate-creates.js";
import { runKillInstance } from "./fleet/kill-instance.js";
import { minTableLockMs, runLocks } from "./fleet/locks.js";
import { runPostgresRestart } from "./fleet/postgres-restart.js";
import { runRateLimit } from "./fleet/rate-limit.js";
import { runSaturation } from "./fleet/saturation.js";
import { runWriteCost } from "./fleet/write-cost.js";

export interface FleetDrillOptions {
  /** The bounded version CI runs: smaller loads, and PostgreSQL is not restarted. */
  quick: boolean;
}

/**
 * runFleetDrills runs the deployment of deploy/ on this machine (PgBouncer
 * and HAProxy from their committed configurations, three instances of
 * src/main.ts, a fresh database migrated on a direct connection) and puts it
 * through what an operator scaling out meets: identical creates spread over
 * the instances, row and table locks, saturated pools, an instance killed
 * mid-load, a PostgreSQL restart (full run only: it restarts the machine's
 * one cluster), and one key flat out against limits shared in Redis. Each is
 * a report of its own; one that cannot run is a failed report, and the rest
 * still run.
 */
export async function runFleetDrills(options: FleetDrillOptions): Promise<DrillReport[]> {
  const missing = haproxyMissing() ?? pgBouncerMissing();
  if (missing) return [failed("Fleet", missing)];
  const { quick } = options;
  const reports: DrillReport[] = [];
  const attempt = async (name: string, run: () => Promise<DrillReport>) => {
    const started = performance.now();
    process.stdout.write(`#   ${name} …\n`);
    let report: DrillReport;
    try {
      report = await run();
    } catch (error) {
      report = failed(name, (error as Error).stack ?? String(error));
    }
    report.figures.push(`took ${((performance.now() - started) / 1000).toFixed(1)} s`);
    reports.push(report);
  };

  let fleet: Fleet | undefined;
  try {
    const starting = performance.now();
    fleet = await startFleet();
    process.stdout.write(`#   the fleet is up (${((performance.now() - starting) / 1000).toFixed(1)} s)\n`);
    const f = fleet;
    // Each scenario starts on a quiet balancer: nothing of the last one in flight or queued.
    const step = (name: string, run: () => Promise<DrillReport>) =>
      attempt(name, async () => {
        await f.settle();
        return run();
      });
    await step("Fleet: concurrent identical creates", () =>
      runDuplicateCreates(f, quick ? { references: 50, copies: 10, batch: 10 } : { references: 200, copies: 20, batch: 10 }),
    );
    if (!quick) await step("Fleet: what a write costs PostgreSQL", () => runWriteCost(f, { creates: 1000, payments: 300, concurrency: 10 }));
    await step("Fleet: row and table locks", () =>
      runLocks(f, quick ? { concurrency: 16, rowLockMs: 5000, tableLockMs: minTableLockMs } : { concurrency: 32, rowLockMs: 8000, tableLockMs: 15_000 }),
    );
    await step("Fleet: saturated pools", () => runSaturation(f, quick ? { connections: 500, durationSeconds: 4 } : { connections: 2000, durationSeconds: 15 }));
    await step("Fleet: kill -9 an instance", () =>
      runKillInstance(f, quick ? { concurrency: 8, beforeMs: 1500, downMs: 1500, afterMs: 1500 } : { concurrency: 32, beforeMs: 3000, downMs: 3000, afterMs: 3000 }),
    );
    if (!quick) await step("Fleet: PostgreSQL restart", () => runPostgresRestart(f, { concurrency: 32, beforeMs: 3000, afterMs: 5000 }));
  } catch (error) {
    reports.push(failed("Fleet", (error as Error).stack ?? String(error)));
  } finally {
    await fleet?.close();
  }

  const noRedis = await redisUnavailable().catch((error: unknown) => String(error));
  if (noRedis) {
    reports.push(failed("Fleet: one key flat out, limits in Redis", noRedis));
    return reports;
  }
  let limited: Fleet | undefined;
  try {
    const ratePerSecond = 100;
    limited = await startFleet({
      merchants: 4,
      env: { REDIS_URL: testRedisUrl, REDIS_KEY_PREFIX: randomPrefix(), RATE_LIMIT_RPS: String(ratePerSecond), RATE_LIMIT_BURST: String(ratePerSecond) },
    });
    const l = limited;
    await attempt("Fleet: one key flat out, limits in Redis", () =>
      runRateLimit(l, { ratePerSecond, seconds: quick ? 4 : 10, concurrency: 16 }),
    );
  } catch (error) {
    reports.push(failed("Fleet: one key flat out, limits in Redis", (error as Error).stack ?? String(error)));
  } finally {
    await limited?.close();
  }
  return reports;
}

function failed(name: string, reason: string): DrillReport {
  return { name, did: "the drill could not run", headline: reason.split("\n")[0]!, figures: [reason], passed: false };
}
