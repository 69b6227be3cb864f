import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { fileURLToPath } from "node:url";

/** The repository root: where `--import tsx src/main.ts` resolves. */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Most stderr kept for failure messages: a server that logs every request must not grow the runner. */
const stderrTailBytes = 64 * 1024;

export interface BenchProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** http://127.0.0.1:<port> it listens on. */
  readonly url: string;
  /** Resident set size now, in bytes (VmRSS). */
  rss(): number;
  /** Peak resident set size since the process started, in bytes (VmHWM). */
  peakRss(): number;
  /** The last 64 KiB the process wrote to stderr. */
  stderrTail(): string;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited (and written its CPU profile). */
  stop(): Promise<void>;
}

export interface BenchProcessOptions {
  /** The script to run with tsx, relative to the repository root. */
  script: string;
  env: Record<string, string | undefined>;
  /** Extra Node flags, e.g. ["--cpu-prof", "--cpu-prof-dir=…"]. */
  nodeArgs?: string[];
  startTimeoutMs?: number;
}

/** readStatusKb reads one "Name: N kB" line of /proc/<pid>/status, in bytes; 0 when gone. */
function readStatusBytes(pid: number, name: "VmRSS" | "VmHWM"): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** freePort asks the kernel for a port nobody listens on (released again at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** accepts resolves whether something accepts TCP connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * startBenchProcess runs a script (the service's src/main.ts or a baseline)
 * as its own process, so the load generator never shares its event loop, on
 * a free port of 127.0.0.1, and resolves once the port accepts connections.
 * (Not by reading the "listening" log line: a run with LOG_LEVEL=warn has none.)
 */
export async function startBenchProcess(options: BenchProcessOptions): Promise<BenchProcess> {
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...process.env, HOST: "127.0.0.1", PORT: String(port), ...options.env })) {
    if (value !== undefined) env[name] = value;
  }
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "--import", "tsx", options.script], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let tail = "";
  child.stderr!.setEncoding("utf8");
  // Drained all along: a server that logs every request synchronously blocks on a full pipe.
  child.stderr!.on("data", (chunk: string) => {
    tail = (tail + chunk).slice(-stderrTailBytes);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    if (exited) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exit;
    clearTimeout(timer);
  };
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const deadline = performance.now() + timeoutMs;
  while (!(await accepts(port))) {
    if (exited) throw new Error(`${options.script} exited before listening; stderr:\n${tail}`);
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`${options.script} did not listen within ${timeoutMs} ms; stderr:\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const pid = child.pid!;
  return {
    child,
    pid,
    url: `http://127.0.0.1:${port}`,
    rss: () => readStatusBytes(pid, "VmRSS"),
    peakRss: () => readStatusBytes(pid, "VmHWM"),
    stderrTail: () => tail,
    stop,
  };
}
