import { createMigrationOrm, type MigrationOrmOptions } from "./create-orm.js";
import { MigrationFailed } from "./migration-failed.js";

/** Arbitrary constant naming this service's migration lock (pg_advisory_xact_lock). */
const migrationLockKey = 7_246_339_001;

/**
 * runMigrations applies pending migrations under a transaction-scoped advisory
 * lock, so several instances starting at once against one database apply each
 * migration exactly once: the others wait, then find nothing pending.
 * Returns the names of the migrations applied.
 */
export async function runMigrations(options: MigrationOrmOptions): Promise<string[]> {
  const orm = await createMigrationOrm(options);
  try {
    return await orm.em.fork().transactional(async (tx) => {
      // A constant of ours, not a client value: nothing to bind.
      await tx.getConnection().execute(`select pg_advisory_xact_lock(${migrationLockKey})`, [], "all", tx.getTransactionContext());
      let applied;
      try {
        applied = await orm.migrator.up({ transaction: tx.getTransactionContext() });
      } catch (error) {
        // A lost connection is the connection's failure, not the migration's.
        if (isConnectionFailure(error)) throw error;
        throw new MigrationFailed((error as Error).message, { cause: error });
      }
      return applied.map((m) => m.name);
    });
  } finally {
    await orm.close(true);
  }
}

/** isConnectionFailure: a network errno or a SQLSTATE of class 08 (connection exception). */
function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && (code.startsWith("E") || code.startsWith("08"));
}
