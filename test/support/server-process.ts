import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The repository root, where `--import tsx src/main.ts` resolves. */
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export interface ServerProcess {
  readonly child: ChildProcess;
  /** The listening URL the process logged. */
  readonly url: string;
  /** Everything the process wrote to stderr so far, for failure messages. */
  stderr(): string;
  /** Everything the process wrote to stdout so far (the demo key banner). */
  stdout(): string;
  /** Resolves with the exit code or signal once the process has exited. */
  readonly exited: Promise<string>;
  /** Ends the process: SIGTERM, then SIGKILL if it is still there after a while. */
  stop(): Promise<void>;
}

export interface ServerProcessOptions {
  /** DATABASE_URL; unset runs on the in-memory stores. */
  databaseUrl?: string;
  /** API_KEYS: "merchant:key,…"; unset makes the server create a demo key. */
  apiKeys?: string;
  /** How long to wait for the "listening" log line. */
  startTimeoutMs?: number;
  env?: Record<string, string>;
  /** Node options before the script, e.g. --inspect=127.0.0.1:0 for a drill that inspects the process. */
  nodeArgs?: string[];
}

/**
 * startServerProcess runs src/main.ts as a real server process on 127.0.0.1
 * port 0 and resolves once it has logged its listening URL (one JSON line on
 * stderr); it rejects, with the stderr so far, if the process exits or stays
 * silent past the timeout.
 */
export function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  // Drills burst far past the default per-key rate limit; a test of the limit sets it in env.
  const env: Record<string, string | undefined> = { ...process.env, PORT: "0", HOST: "127.0.0.1", RATE_LIMIT_RPS: "0", AUTH_FAILURES_PER_MINUTE: "0", ...options.env };
  env.DATABASE_URL = options.databaseUrl;
  env.API_KEYS = options.apiKeys;
  for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "--import", "tsx", "src/main.ts"], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    stdout += chunk;
  });
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ?? String(code)));
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (!alive()) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise<ServerProcess>((resolve, reject) => {
    let pending = "";
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`server did not start within ${options.startTimeoutMs ?? 20_000} ms; stderr:\n${stderr}`));
    }, options.startTimeoutMs ?? 20_000);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr += chunk;
      pending += chunk;
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        let url: unknown;
        try {
          url = (JSON.parse(line) as { url?: unknown }).url;
        } catch {
          continue;
        }
        if (typeof url === "string") {
          clearTimeout(timer);
          resolve({ child, url, stderr: () => stderr, stdout: () => stdout, exited, stop });
        }
      }
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${how}) before listening; stderr:\n${stderr}`));
    });
  });
}
