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
      onPoolCreated: (pool: PoolEvents) => pool.on("connect", closeOnQueryTimeout),
    },
    // The stores fork per call; a shared global identity map would leak state.
    allowGlobalContext: false,
    debug: false,
    logger: options.log ?? (() => {}),
    // The database is provisioned by the operator; never create it implicitly.
    ensureDatabase: false,
  });
}

/** The part of a pg pool this module uses. */
interface PoolEvents {
  on(event: "connect", listener: (client: PooledClient) => void): unknown;
}

/** The part of a pooled pg client this module uses. */
interface PooledClient {
  query(...args: unknown[]): unknown;
  connection?: { stream?: { destroy(): void } };
}

/**
 * closeOnQueryTimeout makes a pooled client drop its connection when a query
 * runs into the client-side query timeout. pg keeps the connection with the
 * timed-out query still active, so the next statement on it (a transaction's
 * ROLLBACK) queues behind that query and waits out a timeout of its own: a
 * request on a database that stopped answering took two query timeouts.
 * Destroying the stream fails what is queued at once, and the pool discards
 * the client (as pg itself does in pipeline mode).
 */
function closeOnQueryTimeout(client: PooledClient): void {
  const query = client.query.bind(client);
  client.query = (...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if ((error as { message?: unknown } | undefined)?.message === "Query read timeout") client.connection?.stream?.destroy();
      });
    }
    return result;
  };
}
