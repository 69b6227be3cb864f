import pg from "pg";
import { cpuTicks } from "./proc-stat.js";
import { createStatementStats, type StatementStats } from "./statement-stats.js";
import { localPorts } from "./tcp-ports.js";

/** CPU ticks of the PostgreSQL backends serving one client process, by backend pid. */
export type BackendTicks = Map<number, number>;

export interface DatabaseCpuMeter {
  /**
   * sample reads utime + stime of every backend of the bench database whose
   * client is the given process (matched by its sockets' local ports against
   * pg_stat_activity.client_port), so the idle servers of other scenarios and
   * other users of the shared PostgreSQL server are not counted.
   */
  sample(clientPid: number): Promise<BackendTicks>;
  /**
   * The cluster's WAL insert position in bytes (pg_current_wal_lsn): the
   * difference over a phase is the WAL the phase wrote, with whatever else
   * wrote to the cluster meanwhile (nothing, on a quiet machine).
   */
  walBytes(): Promise<bigint>;
  /** The bench database's pg_stat_statements counters, when PostgreSQL loaded the module. */
  readonly statements: StatementStats;
  close(): Promise<void>;
}

/**
 * createDatabaseCpuMeter watches the backends of one database from a
 * connection to another (the admin database), so the meter's own queries are
 * never part of the figure. The backends must be processes of this machine:
 * their CPU is read from /proc.
 */
export async function createDatabaseCpuMeter(options: { adminUrl: string; databaseName: string }): Promise<DatabaseCpuMeter> {
  const client = new pg.Client({ connectionString: options.adminUrl, application_name: "bench-cpu-meter" });
  await client.connect();
  const statements = await createStatementStats(client, options.databaseName);
  return {
    statements,
    async sample(clientPid) {
      const ports = localPorts(clientPid);
      const ticks: BackendTicks = new Map();
      if (ports.length === 0) return ticks;
      const { rows } = await client.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = $1 and client_port = any($2::int[])",
        [options.databaseName, ports],
      );
      for (const { pid } of rows) {
        const t = cpuTicks(pid);
        if (t !== undefined) ticks.set(pid, t);
      }
      return ticks;
    },
    async walBytes() {
      const { rows } = await client.query<{ bytes: string }>("select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as bytes");
      return BigInt(rows[0]!.bytes.split(".")[0]!);
    },
    close: () => client.end(),
  };
}

/**
 * backendTicksSpent adds up what the backends spent between two samples. A
 * backend that appeared in between (a new pooled connection) was forked from
 * the postmaster with zero CPU, so all of its time counts; one that went away
 * in between is lost (rare: pools keep their connections under load).
 */
export function backendTicksSpent(before: BackendTicks, after: BackendTicks): number {
  let spent = 0;
  for (const [pid, ticks] of after) spent += ticks - (before.get(pid) ?? 0);
  return spent;
}
