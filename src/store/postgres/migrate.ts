import type { MikroORM } from "@mikro-orm/postgresql";

/** Arbitrary constant naming this service's migration lock (pg_advisory_xact_lock). */
const migrationLockKey = 7_246_339_001;

/**
 * runMigrations applies pending migrations under a transaction-scoped advisory
 * lock, so several instances starting at once against one database apply each
 * migration exactly once: the others wait, then find nothing pending.
 * Returns the names of the migrations applied.
 */
export async function runMigrations(orm: MikroORM): Promise<string[]> {
  const em = orm.em.fork();
  return em.transactional(async (tx) => {
    await tx.getConnection().execute("select pg_advisory_xact_lock(?)", [migrationLockKey], "all", tx.getTransactionContext());
    const applied = await orm.migrator.up({ transaction: tx.getTransactionContext() });
    return applied.map((m) => m.name);
  });
}
