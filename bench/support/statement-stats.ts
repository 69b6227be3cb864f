import type pg from "pg";

/** One normalised statement's counters in pg_stat_statements (cumulative). */
export interface StatementCounters {
  /** queryid (top-level and nested calls added up): the key rows are compared by. */
  key: string;
  /** The statement as pg_stat_statements normalised it: constants and parameters as $n, never a value. */
  query: string;
  calls: number;
  /** Milliseconds, as pg_stat_statements keeps them. */
  execMs: number;
  planMs: number;
  plans: number;
  walBytes: number;
  rows: number;
}

/** What one statement cost over a phase, per request of the phase. */
export interface StatementFigure {
  query: string;
  callsPerRequest: number;
  execUsPerRequest: number;
  planUsPerRequest: number;
  /** Plans made per call: 0 when a prepared statement's generic plan is reused, 1 when every call plans. */
  plansPerCall: number;
  walBytesPerRequest: number;
}

/**
 * Reads pg_stat_statements for one database. The module is only there when
 * PostgreSQL loaded it at start (shared_preload_libraries); the bench then
 * creates the extension in the admin database it watches from, and reads the
 * counters of every database from there.
 */
export interface StatementStats {
  /** Whether the counters can be read; if not, why (for the log). */
  readonly unavailable?: string;
  snapshot(): Promise<Map<string, StatementCounters>>;
}

const snapshotText = `
  select s.queryid::text as key, min(s.query) as query, sum(s.calls)::text as calls, sum(s.total_exec_time) as total_exec_time,
    sum(s.total_plan_time) as total_plan_time, sum(s.plans)::text as plans, sum(s.wal_bytes)::text as wal_bytes, sum(s.rows)::text as rows
  from pg_stat_statements s join pg_database d on d.oid = s.dbid
  where d.datname = $1
  group by s.queryid`;

/**
 * createStatementStats detects pg_stat_statements: the setting
 * shared_preload_libraries must name it (it takes a restart), then
 * `create extension if not exists pg_stat_statements` in the admin database
 * and a first read must succeed. Without it the bench runs as before and
 * says so; docs/BENCHMARKS.md tells how to load it.
 */
export async function createStatementStats(client: pg.Client, databaseName: string): Promise<StatementStats> {
  const none = (unavailable: string): StatementStats => ({ unavailable, snapshot: async () => new Map() });
  const { rows } = await client.query<{ libraries: string }>("select current_setting('shared_preload_libraries') as libraries");
  if (!/(^|[\s,])pg_stat_statements($|[\s,])/.test(rows[0]!.libraries)) {
    return none("pg_stat_statements is not in shared_preload_libraries (docs/BENCHMARKS.md, Per-statement breakdown, tells how to load it)");
  }
  try {
    await client.query("create extension if not exists pg_stat_statements");
    await client.query("select 1 from pg_stat_statements limit 1");
  } catch (error) {
    return none(`pg_stat_statements cannot be read: ${(error as Error).message}`);
  }
  return {
    async snapshot() {
      const result = await client.query<{
        key: string;
        query: string;
        calls: string;
        total_exec_time: number;
        total_plan_time: number;
        plans: string;
        wal_bytes: string;
        rows: string;
      }>(snapshotText, [databaseName]);
      return new Map(
        result.rows.map((r) => [
          r.key,
          {
            key: r.key,
            query: r.query,
            calls: Number(r.calls),
            execMs: Number(r.total_exec_time),
            planMs: Number(r.total_plan_time),
            plans: Number(r.plans),
            walBytes: Number(r.wal_bytes),
            rows: Number(r.rows),
          },
        ]),
      );
    },
  };
}

/**
 * statementFigures is what each statement cost between two snapshots, per
 * request of the phase, costliest (execution + planning) first. A statement
 * that first ran in between counts whole. Statements of other processes on
 * the same database in that time (an idle server's sweeper) are counted too:
 * the phases of a run follow one another, so they are few and show as their
 * own lines.
 */
export function statementFigures(
  before: Map<string, StatementCounters>,
  after: Map<string, StatementCounters>,
  requests: number,
): StatementFigure[] {
  const n = Math.max(1, requests);
  const figures: StatementFigure[] = [];
  for (const [key, a] of after) {
    const b = before.get(key);
    const calls = a.calls - (b?.calls ?? 0);
    if (calls <= 0) continue;
    const plans = a.plans - (b?.plans ?? 0);
    figures.push({
      query: a.query,
      callsPerRequest: calls / n,
      execUsPerRequest: ((a.execMs - (b?.execMs ?? 0)) * 1000) / n,
      planUsPerRequest: ((a.planMs - (b?.planMs ?? 0)) * 1000) / n,
      plansPerCall: plans / calls,
      walBytesPerRequest: (a.walBytes - (b?.walBytes ?? 0)) / n,
    });
  }
  return figures.sort((x, y) => y.execUsPerRequest + y.planUsPerRequest - (x.execUsPerRequest + x.planUsPerRequest));
}

/** mergeFigures is the median, statement by statement, of several phases' figures (a statement missing from a phase counts 0 there). */
export function mergeFigures(phases: StatementFigure[][], median: (values: number[]) => number): StatementFigure[] {
  const queries = new Set(phases.flatMap((p) => p.map((f) => f.query)));
  const pick = (query: string, field: keyof Omit<StatementFigure, "query">) =>
    median(phases.map((p) => p.find((f) => f.query === query)?.[field] ?? 0));
  return [...queries]
    .map((query) => ({
      query,
      callsPerRequest: pick(query, "callsPerRequest"),
      execUsPerRequest: pick(query, "execUsPerRequest"),
      planUsPerRequest: pick(query, "planUsPerRequest"),
      plansPerCall: pick(query, "plansPerCall"),
      walBytesPerRequest: pick(query, "walBytesPerRequest"),
    }))
    .sort((x, y) => y.execUsPerRequest + y.planUsPerRequest - (x.execUsPerRequest + x.planUsPerRequest));
}
