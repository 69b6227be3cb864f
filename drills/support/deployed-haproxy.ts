import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort, waitForPort } from "../../test/support/ports.js";

/** The committed configuration an operator copies. */
export const haproxyConfigPath = fileURLToPath(new URL("../../deploy/haproxy.cfg", import.meta.url));

/** How many instances the committed configuration lists (API1…API3). */
export const haproxyInstances = 3;

/** haproxyMissing says why HAProxy cannot run here, or undefined when it can; REQUIRE_HAPROXY=1 (CI) makes that a failure. */
export function haproxyMissing(): string | undefined {
  const probe = spawnSync("haproxy", ["-v"], { encoding: "utf8" });
  if (!probe.error && probe.status === 0) return undefined;
  if (process.env.REQUIRE_HAPROXY === "1") throw new Error("haproxy is not installed (REQUIRE_HAPROXY=1)");
  return "haproxy is not installed (apt-get install haproxy)";
}

/** One server line of HAProxy's statistics (the CSV of its stats page). */
export interface ServerStats {
  backend: string;
  server: string;
  /** UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (coming up), MAINT… */
  status: string;
  /** UP → DOWN transitions since start. */
  downs: number;
  /** Failed health checks since start. */
  failedChecks: number;
  /** Connection or response errors of requests sent to it. */
  responseErrors: number;
  connectErrors: number;
  /** Requests HAProxy replayed on another server (redispatches) or the same one (retries). */
  redispatches: number;
  retries: number;
  /** Requests being served by it now, and waiting in its queue. */
  current: number;
  queued: number;
}

export interface DeployedHaproxy {
  /** REST, Connect and gRPC-Web: http://127.0.0.1:port */
  readonly httpUrl: string;
  /** gRPC (h2c prior knowledge): http://127.0.0.1:port */
  readonly grpcUrl: string;
  readonly statsUrl: string;
  /** Every server line of both backends. */
  stats(): Promise<ServerStats[]>;
  /** What HAProxy logged (a line per request, health check changes). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * startDeployedHaproxy runs deploy/haproxy.cfg unchanged, its addresses set
 * through the environment variables the file reads: the two frontends and
 * the stats page on free ports of 127.0.0.1, API1… the instances given (the
 * committed file lists three).
 */
export async function startDeployedHaproxy(instances: readonly string[]): Promise<DeployedHaproxy> {
  if (instances.length !== haproxyInstances) throw new Error(`deploy/haproxy.cfg lists ${haproxyInstances} instances, not ${instances.length}`);
  const [http, grpc, stats] = [await freePort(), await freePort(), await freePort()];
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HTTP_BIND: `127.0.0.1:${http}`,
    GRPC_BIND: `127.0.0.1:${grpc}`,
    STATS_BIND: `127.0.0.1:${stats}`,
  };
  instances.forEach((address, i) => (env[`API${i + 1}`] = address));
  const child: ChildProcess = spawn("haproxy", ["-db", "-f", haproxyConfigPath], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  // Kept short: under load every request is a line.
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 4_000_000) output = output.slice(-2_000_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const running = () => child.exitCode === null && child.signalCode === null;
  try {
    for (const port of [http, grpc, stats]) await waitForPort(port, running, () => `haproxy: ${output}`);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  const statsUrl = `http://127.0.0.1:${stats}`;
  return {
    httpUrl: `http://127.0.0.1:${http}`,
    grpcUrl: `http://127.0.0.1:${grpc}`,
    statsUrl,
    async stats() {
      const csv = await (await fetch(`${statsUrl}/;csv`, { signal: AbortSignal.timeout(5000) })).text();
      return parseStats(csv);
    },
    log: () => output,
    async stop() {
      if (!running()) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** parseStats reads the server lines of HAProxy's stats CSV (management guide, 9.1). */
export function parseStats(csv: string): ServerStats[] {
  const [header, ...rows] = csv.trim().split("\n");
  const names = header!.replace(/^# /, "").split(",");
  const field = (cells: string[], name: string) => cells[names.indexOf(name)] ?? "";
  return rows
    .map((row) => row.split(","))
    .filter((cells) => !["FRONTEND", "BACKEND"].includes(field(cells, "svname")) && field(cells, "pxname") !== "stats")
    .map((cells) => ({
      backend: field(cells, "pxname"),
      server: field(cells, "svname"),
      status: field(cells, "status"),
      downs: Number(field(cells, "chkdown") || 0),
      failedChecks: Number(field(cells, "chkfail") || 0),
      responseErrors: Number(field(cells, "eresp") || 0),
      connectErrors: Number(field(cells, "econ") || 0),
      redispatches: Number(field(cells, "wredis") || 0),
      retries: Number(field(cells, "wretr") || 0),
      current: Number(field(cells, "scur") || 0),
      queued: Number(field(cells, "qcur") || 0),
    }));
}
