import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, waitForPort } from "../../test/support/ports.js";

/** The committed configuration an operator copies. */
export const pgBouncerIniPath = fileURLToPath(new URL("../../deploy/pgbouncer.ini", import.meta.url));

/** The database name the committed configuration serves, and so the one in DATABASE_URL. */
export const pgBouncerDatabase = "payments";

/**
 * renderIni replaces the values of settings in an ini file, by section and
 * key, and keeps everything else (comments included) as written. Every key
 * to replace must already be in the file: what runs is the committed
 * configuration, with only its addresses, ports and files changed.
 */
export function renderIni(template: string, overrides: Readonly<Record<string, Readonly<Record<string, string>>>>): string {
  let section = "";
  const unused = new Set(Object.entries(overrides).flatMap(([s, keys]) => Object.keys(keys).map((key) => `${s}.${key}`)));
  const lines = template.split("\n").map((line) => {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (header) {
      section = header[1]!;
      return line;
    }
    const setting = /^(\s*)([A-Za-z0-9_.*-]+)(\s*=\s*).*$/.exec(line);
    const value = setting && overrides[section]?.[setting[2]!];
    if (!setting || value === undefined) return line;
    unused.delete(`${section}.${setting[2]}`);
    return `${setting[1]}${setting[2]}${setting[3]}${value}`;
  });
  if (unused.size > 0) throw new Error(`not in the template: ${[...unused].join(", ")}`);
  return lines.join("\n");
}

/** pgBouncerMissing says why PgBouncer cannot run here, or undefined when it can; REQUIRE_PGBOUNCER=1 (CI) makes that a failure. */
export function pgBouncerMissing(): string | undefined {
  const probe = spawnSync("pgbouncer", ["--version"], { encoding: "utf8" });
  if (!probe.error && probe.status === 0) return undefined;
  if (process.env.REQUIRE_PGBOUNCER === "1") throw new Error("pgbouncer is not installed (REQUIRE_PGBOUNCER=1)");
  return "pgbouncer is not installed (apt-get install pgbouncer)";
}

export interface DeployedPgBouncer {
  readonly port: number;
  /** postgres://user@127.0.0.1:port/payments: what an instance's DATABASE_URL is. */
  readonly url: string;
  /** What PgBouncer logged so far. */
  log(): string;
  stop(): Promise<void>;
}

export interface DeployedPgBouncerOptions {
  /** The PostgreSQL server and database "payments" stands for. */
  target: { host: string; port: number; database: string };
  /** The role the instances connect as (trust authentication on the test server). */
  user: string;
}

/**
 * startDeployedPgBouncer runs deploy/pgbouncer.ini with the lines its
 * comments mark CHANGE replaced: the target database, a free port of
 * 127.0.0.1, trust authentication through a users file of its own (the test
 * server trusts local connections), and the stats user. Pooling, timeouts and
 * server_login_retry are the committed ones. PgBouncer refuses to run as
 * root, so as root it drops to the postgres user.
 */
export async function startDeployedPgBouncer(options: DeployedPgBouncerOptions): Promise<DeployedPgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), "deploy-pgbouncer-"));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const users = join(dir, "users.txt");
  writeFileSync(users, `"${options.user}" ""\n`, { mode: 0o644 });
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(
    ini,
    renderIni(readFileSync(pgBouncerIniPath, "utf8"), {
      databases: { [pgBouncerDatabase]: `host=${options.target.host} port=${options.target.port} dbname=${options.target.database}` },
      pgbouncer: {
        listen_addr: "127.0.0.1",
        listen_port: String(port),
        auth_type: "trust",
        auth_file: users,
        stats_users: options.user,
      },
    }),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn("pgbouncer", [...(asRoot ? ["-u", "postgres"] : []), ini], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  try {
    await waitForPort(port, () => child.exitCode === null, () => `pgbouncer: ${output}`);
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: `postgres://${options.user}@127.0.0.1:${port}/${pgBouncerDatabase}`,
    log: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
