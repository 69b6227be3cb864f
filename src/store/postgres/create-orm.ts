import { Migrator } from "@mikro-orm/migrations";
import { MikroORM } from "@mikro-orm/postgresql";
import { entities } from "./entities/index.js";
import { migrations } from "./migrations/index.js";

export interface DatabaseOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** Most connections this process opens. */
  poolMax: number;
  /**
   * Longest a statement may run, and longest a request waits for a pooled
   * connection or a new one: past it the request fails with Unavailable
   * rather than hanging.
   */
  statementTimeoutMs: number;
  /** Where the ORM's own messages (migrations applied) go. */
  log?: (message: string) => void;
}

/**
 * createOrm opens the MikroORM instance for PostgreSQL. This is the only
 * module that imports the driver; entities import @mikro-orm/core only.
 */
export async function createOrm(options: DatabaseOptions): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: options.url,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList: migrations, snapshot: false, tableName: "mikro_orm_migrations" },
    pool: { min: 0, max: options.poolMax, idleTimeoutMillis: 30_000 },
    driverOptions: {
      statement_timeout: options.statementTimeoutMs,
      // Client-side bound too, for a server that stops answering altogether.
      query_timeout: options.statementTimeoutMs + 1_000,
      connectionTimeoutMillis: options.statementTimeoutMs,
      application_name: "payment-intents",
    },
    // The stores fork per call; a shared global identity map would leak state.
    allowGlobalContext: false,
    debug: false,
    logger: options.log ?? (() => {}),
    // The database is provisioned by the operator; never create it implicitly.
    ensureDatabase: false,
  });
}
