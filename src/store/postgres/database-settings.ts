import type { Database, DeadlineSettings, SessionInfo } from "./database.js";

/** One setting that differs from what the service needs. */
export interface SettingMismatch {
  /** The PostgreSQL setting, as SHOW names it. */
  setting: string;
  expected: string;
  actual: string;
  /** What goes wrong because of it, for the operator. */
  effect: string;
}

/** DatabaseSettingsReport is what the service found about its database at start. */
export interface DatabaseSettingsReport {
  /** Settings in effect inside the stores' transactions that differ from the configuration; empty when all agree. */
  mismatches: SettingMismatch[];
  /**
   * Whether named server-side prepared statements would outlive a transaction
   * on this connection path: false through a pooler such as PgBouncer in
   * transaction pooling, where the next transaction may run on another server
   * connection. The stores never rely on them (they send unnamed statements).
   */
  preparedStatements: { usable: boolean; reason: string };
}

/**
 * The settings read, inside a transaction that carries the deadline as every
 * store call does. pg_settings.setting gives timeouts in ms, without units.
 */
const settingsText = `
  select name, setting from pg_settings
  where name in ('statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout',
                 'transaction_isolation', 'transaction_read_only', 'server_encoding', 'client_encoding')`;
const backendText = "select pg_backend_pid()";

/**
 * checkDatabaseSettings reads, through a pooled connection and inside a
 * pipeline like every request, the settings the stores' transactions run
 * with, and says which differ from what the service configured or needs:
 * - statement_timeout, lock_timeout and idle_in_transaction_session_timeout
 *   must be the deadline the call sent (DB_STATEMENT_TIMEOUT_MS,
 *   DB_LOCK_TIMEOUT_MS): if not, something between the service and
 *   PostgreSQL (a pooler in statement mode, a proxy) drops per-transaction
 *   settings and the deadline is not enforced by the server;
 * - transaction_isolation must be read committed (a role or database default
 *   of repeatable read or serializable makes concurrent creates fail instead
 *   of replaying), transaction_read_only off (a standby, or a default of
 *   read-only, refuses every write), and both encodings UTF8 (anything else
 *   cannot store every character a client may send).
 * It also tells whether named prepared statements would be usable: the
 * backend process id PostgreSQL reports equals the one the connection was
 * given at start-up only when the connection is a session of its own; a
 * pooler hands out its own ids.
 */
export async function checkDatabaseSettings(db: Database): Promise<DatabaseSettingsReport> {
  let session: SessionInfo | undefined;
  const [settings, backend] = await db.run(
    false,
    [
      { text: settingsText, values: [] },
      { text: backendText, values: [] },
    ],
    (info) => (session = info),
  );
  const actual = new Map(settings!.rows.map((row) => [row[0]!, row[1]!]));
  const deadline: DeadlineSettings = session!.deadline;
  const expectations: { setting: string; expected: string; effect: string }[] = [
    {
      setting: "statement_timeout",
      expected: String(deadline.statementTimeoutMs),
      effect: "the per-transaction statement timeout is not applied: PostgreSQL does not enforce DB_STATEMENT_TIMEOUT_MS",
    },
    {
      setting: "lock_timeout",
      expected: String(deadline.lockTimeoutMs),
      effect: "the per-transaction lock timeout is not applied: a write waiting on a locked row does not give up at DB_LOCK_TIMEOUT_MS",
    },
    {
      setting: "idle_in_transaction_session_timeout",
      expected: String(deadline.idleInTransactionTimeoutMs),
      effect: "a checkout transaction whose client vanished keeps its row lock",
    },
    {
      setting: "transaction_isolation",
      expected: "read committed",
      effect: "concurrent writes fail with serialization errors (503) instead of waiting and replaying",
    },
    { setting: "transaction_read_only", expected: "off", effect: "every write is refused (503)" },
    { setting: "server_encoding", expected: "UTF8", effect: "text outside the database's character set is refused (400)" },
    { setting: "client_encoding", expected: "UTF8", effect: "text is converted on the way in and out" },
  ];
  const mismatches: SettingMismatch[] = [];
  for (const { setting, expected, effect } of expectations) {
    const value = actual.get(setting) ?? "(not reported)";
    if (value !== expected) mismatches.push({ setting, expected, actual: value, effect });
  }

  const backendPid = Number(backend!.rows[0]![0]);
  const announced = session!.announcedProcessId;
  const preparedStatements =
    announced === backendPid
      ? { usable: true, reason: "the connection is a PostgreSQL session of its own" }
      : {
          usable: false,
          reason:
            "the connection goes through a pooler (its backend is not the one announced at start-up), so a statement prepared in one transaction may be missing in the next",
        };
  return { mismatches, preparedStatements };
}

/** describeSettingsReport is the report as one line per finding, for the log and /readyz. */
export function describeSettingsReport(report: DatabaseSettingsReport): string[] {
  return report.mismatches.map(
    (m) => `${m.setting} is ${JSON.stringify(m.actual)} in the service's transactions, expected ${JSON.stringify(m.expected)}: ${m.effect}`,
  );
}
