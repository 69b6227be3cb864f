import { queryDatabase } from "../../test/support/postgres.js";

/** One table's cumulative counters in pg_stat_user_tables. */
export interface TableCounters {
  seqScans: number;
  seqRows: number;
  indexScans: number;
  inserted: number;
  updated: number;
  deleted: number;
}

/** What one table saw over a phase, per unit of work (a request, a payment). */
export interface TableActivity extends TableCounters {
  table: string;
}

const countersText = `
  select relname as table, seq_scan::text, seq_tup_read::text, coalesce(idx_scan, 0)::text as idx_scan,
    n_tup_ins::text, n_tup_upd::text, n_tup_del::text
  from pg_stat_user_tables`;

/**
 * readTableCounters reads pg_stat_user_tables of one database, on a
 * connection of its own (a fresh statistics snapshot). Where pg_stat_statements
 * cannot be loaded (it takes a restart), it still tells which tables a piece
 * of work scans sequentially, reads by index and writes; backends publish
 * their counts within about a second, so a phase of several seconds is needed.
 */
export async function readTableCounters(databaseUrl: string): Promise<Map<string, TableCounters>> {
  const { rows } = await queryDatabase<Record<string, string>>(databaseUrl, countersText);
  return new Map(
    rows.map((r) => [
      r["table"]!,
      {
        seqScans: Number(r["seq_scan"]),
        seqRows: Number(r["seq_tup_read"]),
        indexScans: Number(r["idx_scan"]),
        inserted: Number(r["n_tup_ins"]),
        updated: Number(r["n_tup_upd"]),
        deleted: Number(r["n_tup_del"]),
      },
    ]),
  );
}

/** tableActivityPer is each table's change between two readings divided by count, tables with none left out, busiest first. */
export function tableActivityPer(before: Map<string, TableCounters>, after: Map<string, TableCounters>, count: number): TableActivity[] {
  const keys = ["seqScans", "seqRows", "indexScans", "inserted", "updated", "deleted"] as const;
  const per = Math.max(1, count);
  return [...after]
    .map(([table, now]) => {
      const then = before.get(table);
      const activity = { table } as TableActivity;
      for (const key of keys) activity[key] = (now[key] - (then?.[key] ?? 0)) / per;
      return activity;
    })
    .filter((a) => keys.some((key) => a[key] > 0))
    .sort((a, b) => b.seqRows - a.seqRows || b.indexScans + b.inserted + b.updated - (a.indexScans + a.inserted + a.updated));
}

/** describeTableActivity is one table per clause: "payment_intents 1.0 index reads, 1.0 updated; …". */
export function describeTableActivity(activity: readonly TableActivity[]): string {
  const n = (x: number) => (x >= 10 ? Math.round(x).toLocaleString("en") : x.toFixed(1));
  return activity
    .map((a) => {
      const parts = [
        a.seqScans > 0 ? `${n(a.seqScans)} sequential scans (${n(a.seqRows)} rows)` : "",
        a.indexScans > 0 ? `${n(a.indexScans)} index scans` : "",
        a.inserted > 0 ? `${n(a.inserted)} inserted` : "",
        a.updated > 0 ? `${n(a.updated)} updated` : "",
        a.deleted > 0 ? `${n(a.deleted)} deleted` : "",
      ].filter((p) => p !== "");
      return `${a.table} ${parts.join(", ")}`;
    })
    .join("; ");
}
