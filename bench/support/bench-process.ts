import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { accepts, freePort } from "../../test/support/ports.js";

/** The repository root: where `--import tsx src/main.ts` resolves. */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Most of a process's log kept for failure messages. */
const stderrTailBytes = 64 * 1024;

/** A process the bench started: a server, a reference server or a load generator. */
export interface BenchChild {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resident set size now, in bytes (VmRSS). */
  rss(): number;
  /** Peak resident set size since the process started, in bytes (VmHWM). */
  peakRss(): number;
  /** The last 64 KiB the process wrote to stderr. */
  stderrTail(): string;
  /** Whether it has exited. */
  exited(): boolean;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process has exited (and written its CPU profile). */
  stop(): Promise<void>;
}

/** A server the bench started, listening on 127.0.0.1. */
export interface BenchProcess extends BenchChild {
  /** http://127.0.0.1:<port> it listens on. */
  readonly url: string;
}

export interface BenchChildOptions {
  /** The script to run with tsx (a .js file: with Node alone), relative to the repository root. */
  script: string;
  env: Record<string, string | undefined>;
  /** Extra Node flags, e.g. ["--cpu-prof", "--cpu-prof-dir=…"]. */
  nodeArgs?: string[];
  /**
   * The file its stderr (our service's request log, pino's default stream)
   * is appended to. A file rather than a pipe: the bench process would
   * otherwise spend CPU of its own draining thousands of lines a second.
   */
  logPath: string;
  /** Pipe stdin and stdout to the bench (for a command child); ignored otherwise. */
  pipeStdio?: boolean;
  /** The checkout to run it from (default this one): the webhook bench compares a build of another commit. */
  root?: string;
}

/** readStatusBytes reads one "Name: N kB" line of /proc/<pid>/status, in bytes; 0 when gone. */
function readStatusBytes(pid: number, name: "VmRSS" | "VmHWM"): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** fileTail reads the last bytes of a file, for a failure message. */
function fileTail(path: string, bytes: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const size = fstatSync(fd).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString("utf8");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** spawnBenchChild runs a script with tsx as a process of its own, stderr appended to options.logPath. */
export function spawnBenchChild(options: BenchChildOptions): BenchChild {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...process.env, ...options.env })) {
    if (value !== undefined) env[name] = value;
  }
  const log = openSync(options.logPath, "a");
  let child: ChildProcess;
  try {
    // Built JavaScript (npm run build: dist/, what the image ships) runs without the TypeScript loader.
    const loader = options.script.endsWith(".js") ? [] : ["--import", "tsx"];
    child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...loader, options.script], {
      cwd: options.root ?? repoRoot,
      env,
      stdio: options.pipeStdio ? ["pipe", "pipe", log] : ["ignore", "ignore", log],
    });
  } finally {
    closeSync(log);
  }
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  const pid = child.pid!;
  return {
    child,
    pid,
    rss: () => readStatusBytes(pid, "VmRSS"),
    peakRss: () => readStatusBytes(pid, "VmHWM"),
    stderrTail: () => fileTail(options.logPath, stderrTailBytes),
    exited: () => exited,
    stop: async () => {
      if (exited) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/**
 * startBenchProcess runs a server script (the service's src/main.ts or a
 * reference server) as its own process, so the load generator never shares
 * its event loop, on a free port of 127.0.0.1 (HOST and PORT), and resolves
 * once the port accepts connections. (Not by reading the "listening" log
 * line: a run with LOG_LEVEL=warn has none.)
 */
export async function startBenchProcess(
  options: Omit<BenchChildOptions, "pipeStdio"> & { startTimeoutMs?: number },
): Promise<BenchProcess> {
  const port = await freePort();
  const child = spawnBenchChild({ ...options, env: { HOST: "127.0.0.1", PORT: String(port), ...options.env } });
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const deadline = performance.now() + timeoutMs;
  while (!(await accepts(port))) {
    if (child.exited()) throw new Error(`${options.script} exited before listening; stderr:\n${child.stderrTail()}`);
    if (performance.now() > deadline) {
      await child.stop();
      throw new Error(`${options.script} did not listen within ${timeoutMs} ms; stderr:\n${child.stderrTail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { ...child, url: `http://127.0.0.1:${port}` };
}
