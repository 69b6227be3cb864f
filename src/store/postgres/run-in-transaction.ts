import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * runInTransaction runs work in one database transaction on a fork of em
 * bound to it: committed when work resolves, rolled back when it throws.
 *
 * It uses Kysely's callback transaction, which hands its pooled connection
 * back on every path. `em.transactional` goes through Kysely's
 * startTransaction, which keeps the connection checked out for good when
 * BEGIN, COMMIT or ROLLBACK fails on a dropped connection
 * (kysely-org/kysely#1990): a few dropped connections would exhaust the pool
 * and the service would never recover from an outage.
 */
export async function runInTransaction<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em
    .fork({ clear: true })
    .getKysely()
    .transaction()
    .execute(async (trx) => {
      const tx = em.fork({ clear: true });
      tx.setTransactionContext(trx);
      return work(tx);
    });
}
