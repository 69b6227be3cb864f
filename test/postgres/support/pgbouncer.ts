import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForPort } from "../../support/ports.js";

/** A PgBouncer this test started, in transaction pooling, in front of one PostgreSQL. */
export interface PgBouncer {
  readonly port: number;
  /** url with its host and port replaced by this PgBouncer's. */
  urlFor(url: string): string;
  /** What PgBouncer logged so far, for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The PostgreSQL server it pools. */
  target: { host: string; port: number };
  /** Server connections per database and user (default_pool_size). */
  poolSize: number;
  /** Users that may connect (auth_type = trust still needs them listed). */
  users: string[];
  /**
   * Start-up parameters to accept and drop (ignore_startup_parameters). The
   * service needs none: node-postgres sends only user, database,
   * application_name and client_encoding, which PgBouncer tracks.
   */
  ignoreStartupParameters?: string[];
}

/** pgBouncerUnavailable says why PgBouncer cannot be started here, or undefined when it can; REQUIRE_PGBOUNCER=1 makes that a failure. */
export function pgBouncerUnavailable(): string | undefined {
  const probe = spawnSync("pgbouncer", ["--version"], { encoding: "utf8" });
  if (!probe.error && probe.status === 0) return undefined;
  // CI installs it (.ci/run): there, a missing PgBouncer fails instead of skipping.
  if (process.env.REQUIRE_PGBOUNCER === "1") throw new Error("pgbouncer is not installed (REQUIRE_PGBOUNCER=1)");
  return "pgbouncer is not installed";
}

/**
 * startPgBouncer runs PgBouncer (1.18 on these machines) on a free port of
 * 127.0.0.1 with a generated configuration: pool_mode = transaction and trust
 * authentication for the given users, otherwise PgBouncer's defaults. It
 * refuses to run as root, so as root it drops to the postgres user.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), "pgbouncer-"));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  const users = join(dir, "users.txt");
  writeFileSync(users, options.users.map((user) => `"${user}" ""`).join("\n") + "\n", { mode: 0o644 });
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=${options.target.host} port=${options.target.port}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${users}`,
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize}`,
      "max_client_conn = 200",
      "server_login_retry = 1",
      ...(options.ignoreStartupParameters?.length ? [`ignore_startup_parameters = ${options.ignoreStartupParameters.join(",")}`] : []),
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child = spawn("pgbouncer", [...(asRoot ? ["-u", "postgres"] : []), ini], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  try {
    await waitForPort(port, () => child.exitCode === null, () => `pgbouncer exited (${child.exitCode}): ${output}`);
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    log: () => output,
    urlFor(url) {
      const through = new URL(url);
      through.hostname = "127.0.0.1";
      through.port = String(port);
      return through.toString();
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        // SIGINT: PgBouncer's "safe shutdown" waits for clients; SIGTERM closes at once.
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
