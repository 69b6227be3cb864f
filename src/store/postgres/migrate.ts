import { createMigrationOrm, type MigrationOrmOptions } from "./create-orm.js";

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
      const applied = await orm.migrator.up({ transaction: tx.getTransactionContext() });
      return applied.map((m) => m.name);
    });
  } finally {
    await orm.close(true);
  }
}
