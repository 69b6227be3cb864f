import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DrillReport } from "../support/drill-report.js";
import { fleetPoolMax, fleetStatementTimeoutMs, type Fleet } from "../support/fleet.js";
import { watchReadiness } from "./readiness-watch.js";

export interface SaturationOptions {
  /** Client connections at once, each sending requests back to back. */
  connections: number;
  durationSeconds: number;
}

/** Counts answers by status in every wrk thread and prints them at the end ("status <code> <count>"). */
const statusScript = `
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) counts = {} end
function response(status, headers, body)
  local key = tostring(status)
  if status >= 300 then key = key .. " " .. (string.match(body, '"message":"([^"]*)"') or "?") end
  counts[key] = (counts[key] or 0) + 1
end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for key, n in pairs(t:get("counts")) do total[key] = (total[key] or 0) + n end
  end
  for key, n in pairs(total) do io.write(string.format("status %s|%d\\n", key, n)) end
  io.write(string.format("latency p50 %d p99 %d max %d\\n", latency:percentile(50), latency:percentile(99), latency.max))
end
`;

/** wrkMissing says why wrk cannot run here, or undefined when it can. */
export function wrkMissing(): string | undefined {
  const probe = spawnSync("wrk", ["--version"], { encoding: "utf8" });
  return probe.error ? "wrk is not installed (apt-get install wrk)" : undefined;
}

/**
 * runSaturation points far more clients at HAProxy than the instances' pools
 * hold (wrk, GET of a list page with a key, which takes a pooled database
 * connection each): the pools saturate and the excess is answered 503 with
 * Retry-After after the deadline, but /readyz must stay 200 on every
 * instance, and HAProxy must take none out. (Before readiness read the pool's
 * own state, a probe queued behind those requests and 2,000 clients took all
 * three out five times.)
 */
export async function runSaturation(fleet: Fleet, options: SaturationOptions): Promise<DrillReport> {
  const missing = wrkMissing();
  if (missing) throw new Error(missing);
  const dir = mkdtempSync(join(tmpdir(), "fleet-wrk-"));
  const script = join(dir, "statuses.lua");
  writeFileSync(script, statusScript);
  const downsBefore = await fleet.downs();
  const readiness = watchReadiness(fleet.instanceUrls, 500, 5000);
  let output = "";
  try {
    const wrk = spawn(
      "wrk",
      [
        "-t2",
        `-c${options.connections}`,
        `-d${options.durationSeconds}s`,
        "--timeout",
        "10s",
        "-s",
        script,
        "-H",
        `Authorization: Bearer ${fleet.merchant.key}`,
        `${fleet.haproxy.httpUrl}/v1/v2/payment-intents?pageSize=5`,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    wrk.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    wrk.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => wrk.once("exit", resolve));
    if (code !== 0) throw new Error(`wrk exited ${code}: ${output}`);
  } finally {
    await readiness.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  await fleet.settle();
  const answers = [...output.matchAll(/^status (\d+)( [^|]*)?\|(\d+)$/gm)].map((m) => ({ status: Number(m[1]), message: m[2]?.trim(), count: Number(m[3]) }));
  const statuses = [...new Set(answers.map((a) => a.status))].sort().map((status) => ({
    status,
    count: answers.filter((a) => a.status === status).reduce((sum, a) => sum + a.count, 0),
  }));
  const total = statuses.reduce((sum, s) => sum + s.count, 0);
  const perSecond = /Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? "?";
  const socketErrors = /Socket errors: (.*)/.exec(output)?.[1] ?? "none";
  const latency = /^latency p50 (\d+) p99 (\d+) max (\d+)$/m.exec(output);
  const downs = (await fleet.downs()) - downsBefore;
  const notReady = readiness.notReady();
  const others = statuses.filter((s) => s.status !== 200 && s.status !== 503);
  const passed = total > 0 && downs === 0 && notReady.length === 0 && others.length === 0 && readiness.maxWaiting() > 0;
  const ms = (us: string | undefined) => `${Math.round(Number(us) / 1000)} ms`;
  return {
    name: "Fleet: saturated pools",
    did: `${options.connections} client connections (wrk) sending list requests back to back through HAProxy for ${options.durationSeconds} s, against three instances with DB_POOL_MAX=${fleetPoolMax} and DB_STATEMENT_TIMEOUT_MS=${fleetStatementTimeoutMs}; every instance's /readyz probed every 500 ms`,
    headline: `${total} answers (${statuses.map((s) => `${s.status}×${s.count}`).join(", ")}), HAProxy took instances out ${downs} times, /readyz not 200 ${notReady.length} times in ${readiness.probes()} probes`,
    figures: [
      `${perSecond} requests/s; latency p50 ${ms(latency?.[1])}, p99 ${ms(latency?.[2])}, max ${ms(latency?.[3])}; wrk socket errors: ${socketErrors}`,
      `errors: ${answers.filter((a) => a.status >= 300).map((a) => `${a.status} "${a.message}" ×${a.count}`).join("; ") || "none"}`,
      `calls waiting for a pooled connection, the most one instance's /readyz detail showed: ${readiness.maxWaiting()} (pool of ${fleetPoolMax}; HAProxy's maxconn holds the rest in its queue)`,
      ...(notReady.length ? [`not ready: ${notReady.slice(0, 5).join("; ")}`] : []),
    ],
    passed,
  };
}
