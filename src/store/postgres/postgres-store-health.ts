import type { StoreHealth, StoreState } from "../store-health.js";
import type { Database } from "./database.js";

export interface PostgresStoreHealthOptions {
  /** The migrations this code needs, by the names mikro_orm_migrations records. */
  migrationNames: readonly string[];
  /**
   * Watch for pending migrations: at start and then periodically. On when the
   * service does not apply migrations itself (MIGRATE_ON_START=false), since
   * then another step must, and the instance must not serve before it has.
   */
  watchMigrations: boolean;
  /** How often to look again while migrations are pending (default 5 s). */
  pendingCheckMs?: number;
  /** How often to look again once none are, in case the schema is rolled back (default 60 s). */
  settledCheckMs?: number;
}

/** PostgresStoreHealth is StoreHealth with the migrations watch's lifetime. */
export interface PostgresStoreHealth extends StoreHealth {
  /** Reads the applied migrations once (when watched) and starts the periodic check. */
  start(): Promise<void>;
  /** Stops the periodic check. */
  stop(): void;
}

const appliedText = "select name from mikro_orm_migrations";
/** undefined_table: the database has never been migrated. */
const undefinedTable = "42P01";

/**
 * createPostgresStoreHealth answers readiness from the pool's own state
 * (database.ts: whether its calls reach PostgreSQL, how its connections are
 * used), never from a query per probe. It sends a statement only to probe a
 * database that is unreachable, and, when watching migrations, to read
 * mikro_orm_migrations every few seconds.
 */
export function createPostgresStoreHealth(db: Database, options: PostgresStoreHealthOptions): PostgresStoreHealth {
  const pendingCheckMs = options.pendingCheckMs ?? 5000;
  const settledCheckMs = options.settledCheckMs ?? 60_000;
  let pendingMigrations: readonly string[] | undefined = options.watchMigrations ? undefined : [];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function checkMigrations(): Promise<void> {
    try {
      const [result] = await db.run(false, [{ text: appliedText, values: [] }]);
      const applied = new Set(result!.rows.map((row) => row[0]));
      pendingMigrations = options.migrationNames.filter((name) => !applied.has(name));
    } catch (error) {
      if ((error as { code?: unknown }).code === undefinedTable) pendingMigrations = [...options.migrationNames];
      // Unreachable: the last answer stands, and reachability says the rest.
    }
  }

  function schedule(): void {
    if (stopped) return;
    const delay = pendingMigrations === undefined || pendingMigrations.length > 0 ? pendingCheckMs : settledCheckMs;
    timer = setTimeout(() => void checkMigrations().then(schedule), delay);
    timer.unref();
  }

  return {
    state(): StoreState {
      const pool = db.poolState();
      return {
        kind: "postgres",
        reachable: pool.reachable,
        since: pool.since,
        unreachableForMs: pool.unreachableForMs,
        lastFailure: pool.lastFailure,
        lastAnsweredAt: pool.lastAnsweredAt,
        pool: { open: pool.open, idle: pool.idle, waiting: pool.waiting, max: pool.max, saturatedCalls: pool.saturatedCalls },
        pendingMigrations,
      };
    },
    async probe() {
      await db.run(false, [{ text: "select 1", values: [] }]).catch(() => {});
    },
    async start() {
      if (!options.watchMigrations) return;
      await checkMigrations();
      schedule();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
