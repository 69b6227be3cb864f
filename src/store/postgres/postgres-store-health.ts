import type { EntityManager } from "@mikro-orm/postgresql";
import type { StoreHealth } from "../store-health.js";
import { withDatabaseErrors } from "./database-errors.js";

/**
 * createPostgresStoreHealth pings PostgreSQL with `select 1` on a pooled
 * connection. The pool's statement and connection timeouts
 * (DB_STATEMENT_TIMEOUT_MS) bound it, so an unreachable server fails the
 * probe instead of hanging it.
 */
export function createPostgresStoreHealth(root: EntityManager): StoreHealth {
  return {
    ping: () =>
      withDatabaseErrors(async () => {
        await root.getConnection().execute("select 1");
      }),
  };
}
