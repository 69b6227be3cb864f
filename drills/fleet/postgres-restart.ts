import { spawn, spawnSync } from "node:child_process";
import { errorMessages, isErrorBody, startCreateLoad, statusCounts } from "../support/create-load.js";
import type { DrillReport } from "../support/drill-report.js";
import type { Fleet } from "../support/fleet.js";
import { checkAcknowledged } from "./acknowledged.js";
import { watchReadiness } from "./readiness-watch.js";

export interface PostgresRestartOptions {
  concurrency: number;
  beforeMs: number;
  /** Load after the restart command returned. */
  afterMs: number;
}

/** How much longer than the restart itself clients may see errors. */
const slackMs = 2000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The cluster PostgreSQL runs as on port 5432 (Debian's pg_lsclusters): version and name. */
export function localCluster(): { version: string; name: string } | undefined {
  const listed = spawnSync("pg_lsclusters", ["--no-header"], { encoding: "utf8" });
  if (listed.status !== 0) return undefined;
  const line = listed.stdout
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .find((cells) => cells[2] === "5432");
  return line ? { version: line[0]!, name: line[1]! } : undefined;
}

/**
 * runPostgresRestart restarts the machine's PostgreSQL (pg_ctlcluster, fast
 * shutdown) under a load of creates through HAProxy and PgBouncer. Clients
 * may see errors for no longer than the restart took plus 2 s, every error
 * must be an answer in the API's error shape, every acknowledged create must
 * be stored, and no instance may leave the balancer (the outage is shared and
 * shorter than DB_UNREADY_AFTER_MS).
 */
export async function runPostgresRestart(fleet: Fleet, options: PostgresRestartOptions): Promise<DrillReport> {
  const cluster = localCluster();
  if (!cluster) throw new Error("no PostgreSQL cluster on port 5432 in pg_lsclusters: this drill restarts the local one");
  const downsBefore = await fleet.downs();
  const readiness = watchReadiness(fleet.instanceUrls);
  const prefix = `pgrestart-${Date.now()}`;
  const load = startCreateLoad({ restUrl: `${fleet.haproxy.httpUrl}/v1`, key: fleet.merchant.key, concurrency: options.concurrency, prefix });
  await sleep(options.beforeMs);
  const restartAt = load.now();
  const restart = spawn("pg_ctlcluster", ["--skip-systemctl-redirect", cluster.version, cluster.name, "restart"], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  restart.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  restart.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => restart.once("exit", resolve));
  const restartedAt = load.now();
  await sleep(options.afterMs);
  await load.stop();
  await readiness.stop();
  if (code !== 0) throw new Error(`pg_ctlcluster restart exited ${code}: ${output}`);

  const samples = load.samples;
  const failed = samples.filter((s) => s.status < 200 || s.status >= 300);
  const windowMs = failed.length === 0 ? 0 : Math.max(...failed.map((s) => s.end)) - Math.min(...failed.map((s) => s.start));
  const restartMs = restartedAt - restartAt;
  const notJson = failed.filter((s) => s.status === 0 || !isErrorBody(s.status, s.body));
  const check = await checkAcknowledged(fleet.db.url, fleet.merchant.id, prefix, samples);
  const downs = (await fleet.downs()) - downsBefore;
  const notReady = readiness.notReady();
  const passed = windowMs <= restartMs + slackMs && notJson.length === 0 && check.missing.length === 0 && check.mismatched.length === 0 && downs === 0;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const signed = (ms: number) => `${ms < 0 ? "−" : "+"}${seconds(Math.abs(ms))}`;
  return {
    name: "Fleet: PostgreSQL restart",
    did: `pg_ctlcluster restart of the PostgreSQL ${cluster.version} cluster (fast shutdown) under ${options.concurrency} concurrent creates through HAProxy, three instances and PgBouncer (server_login_retry = 1)`,
    headline: `clients saw errors for ${seconds(windowMs)} of a ${seconds(restartMs)} restart (bound: the restart + ${seconds(slackMs)}), ${notJson.length} not the API's JSON, ${check.missing.length} of ${check.acknowledged} acknowledged creates missing, HAProxy took instances out ${downs} times`,
    figures: [
      `answers: ${statusCounts(samples)}`,
      `errors: ${errorMessages(failed)}`,
      failed.length === 0
        ? "no request failed"
        : `the first failed request was sent ${signed(Math.min(...failed.map((s) => s.start)) - restartAt)} from the start of the restart; the last failure was answered ${signed(Math.max(...failed.map((s) => s.end)) - restartedAt)} from the restart's return`,
      `/readyz answers other than 200 during it: ${notReady.length}${notReady.length ? ` (${notReady.slice(0, 3).join("; ")})` : ""}; stored for creates that got no 2xx: ${check.storedUnacknowledged}`,
    ],
    passed,
  };
}
