import { UniqueConstraintViolationException } from "@mikro-orm/core";
// Type only: the SQL entity manager's query builder. The driver itself is
// loaded in create-orm.ts alone.
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PaymentIntentRecord, PaymentIntentStatus } from "../../domain/payment-intent.js";
import type { InsertResult, ListQuery, PaymentIntentStore } from "../payment-intent-store.js";
import { withDatabaseErrors } from "./database-errors.js";
import { PaymentIntentEntity, type PaymentIntentRow } from "./entities/payment-intent-entity.js";
import { PaymentIntentMethodEntity } from "./entities/payment-intent-method-entity.js";
import { PaymentIntentSplitEntity } from "./entities/payment-intent-split-entity.js";
import { runInTransaction } from "./run-in-transaction.js";

/** The constraint that makes a clientReference unique per merchant. */
const referenceConstraint = "payment_intents_merchant_reference_key";

/**
 * createPostgresPaymentIntentStore keeps intents in PostgreSQL through
 * MikroORM. Each call works in a fresh fork of the entity manager, so no state
 * is shared between requests. Uniqueness of (merchant, clientReference) is the
 * database's unique constraint: a violation is turned into the same
 * {inserted: false} result the in-memory store gives.
 */
export function createPostgresPaymentIntentStore(root: EntityManager): PaymentIntentStore {
  const fork = () => root.fork({ clear: true });

  async function load(em: EntityManager, rows: PaymentIntentRow[]): Promise<PaymentIntentRecord[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const [methods, splits] = await Promise.all([
      em.find(PaymentIntentMethodEntity, { paymentIntentId: { $in: ids } }, { orderBy: { position: "asc" } }),
      em.find(PaymentIntentSplitEntity, { paymentIntentId: { $in: ids } }, { orderBy: { position: "asc" } }),
    ]);
    return rows.map((row) => ({
      id: row.id,
      merchantId: row.merchantId,
      amount: BigInt(row.amount),
      totalAmount: BigInt(row.totalAmount),
      currency: "NGN",
      country: "NG",
      customerEmail: row.customerEmail,
      receiptEmail: row.receiptEmail,
      status: row.status as PaymentIntentStatus,
      clientReference: row.clientReference,
      paymentMethods: methods.filter((m) => m.paymentIntentId === row.id).map((m) => m.method),
      callbackUrl: row.callbackUrl ?? null,
      transaction: row.transaction ?? null,
      splits: splits
        .filter((s) => s.paymentIntentId === row.id)
        .map((s) => ({ settlementAccountId: s.settlementAccountId, splitAmount: BigInt(s.splitAmount) })),
      checkoutToken: row.checkoutToken,
      requestFingerprint: row.requestFingerprint,
      createdAt: new Date(row.createdAt),
      updatedAt: new Date(row.updatedAt),
      deletedAt: row.deletedAt ? new Date(row.deletedAt) : null,
    }));
  }

  async function findOne(em: EntityManager, where: Record<string, unknown>): Promise<PaymentIntentRecord | undefined> {
    const row = await em.findOne(PaymentIntentEntity, where);
    return row ? (await load(em, [row]))[0] : undefined;
  }

  return {
    insert: (record) =>
      withDatabaseErrors(async (): Promise<InsertResult> => {
        const em = fork();
        try {
          // One transaction: the intent, its methods and its splits, or nothing.
          await runInTransaction(em, async (tx) => {
            await tx.insert(PaymentIntentEntity, {
              id: record.id,
              merchantId: record.merchantId,
              amount: record.amount,
              totalAmount: record.totalAmount,
              currency: record.currency,
              country: record.country,
              customerEmail: record.customerEmail,
              receiptEmail: record.receiptEmail,
              status: record.status,
              clientReference: record.clientReference,
              callbackUrl: record.callbackUrl,
              transaction: record.transaction,
              checkoutToken: record.checkoutToken,
              requestFingerprint: record.requestFingerprint,
              createdAt: record.createdAt,
              updatedAt: record.updatedAt,
              deletedAt: record.deletedAt,
            });
            if (record.paymentMethods.length > 0) {
              await tx.insertMany(
                PaymentIntentMethodEntity,
                record.paymentMethods.map((method, position) => ({ paymentIntentId: record.id, position, method })),
              );
            }
            if (record.splits.length > 0) {
              await tx.insertMany(
                PaymentIntentSplitEntity,
                record.splits.map((split, position) => ({
                  paymentIntentId: record.id,
                  position,
                  merchantId: record.merchantId,
                  settlementAccountId: split.settlementAccountId,
                  splitAmount: split.splitAmount,
                })),
              );
            }
          });
        } catch (error) {
          if (!(error instanceof UniqueConstraintViolationException) || !String(error.message).includes(referenceConstraint)) {
            throw error;
          }
          // The reference is taken: the winner has committed, so it is visible now.
          const existing = await findOne(fork(), { merchantId: record.merchantId, clientReference: record.clientReference });
          if (!existing) throw error;
          return { inserted: false, existing };
        }
        return { inserted: true, record: structuredClone(record) };
      }),

    findById: (merchantId, id) => withDatabaseErrors(() => findOne(fork(), { merchantId, id })),

    list: (query: ListQuery) =>
      withDatabaseErrors(async () => {
        const em = fork();
        return load(em, await listQuery(em, query).getResultList());
      }),

    cancel: (merchantId, id, at) =>
      withDatabaseErrors(async () => {
        const em = fork();
        const changed = await em.nativeUpdate(
          PaymentIntentEntity,
          { merchantId, id, status: "pending", deletedAt: null },
          { status: "cancelled", updatedAt: at, deletedAt: at },
        );
        return changed === 1 ? findOne(em, { merchantId, id }) : undefined;
      }),
  };
}

/**
 * listQuery is the keyset page query: the row comparison
 * (created_at, id) < (cursor) is an index condition on
 * payment_intents_merchant_created_idx, so a deep page costs what the first
 * does (no OFFSET). Exported for the EXPLAIN test.
 */
export function listQuery(em: EntityManager, query: ListQuery) {
  const qb = em
    .createQueryBuilder(PaymentIntentEntity, "pi")
    .select("*")
    .where({ merchantId: query.merchantId, deletedAt: null });
  if (query.clientReference !== undefined) qb.andWhere({ clientReference: query.clientReference });
  if (query.status !== undefined) qb.andWhere({ status: query.status });
  if (query.after) qb.andWhere("(pi.created_at, pi.id) < (?, ?)", [query.after.createdAt, query.after.id]);
  return qb.orderBy([{ createdAt: "desc" }, { id: "desc" }]).limit(query.limit);
}
