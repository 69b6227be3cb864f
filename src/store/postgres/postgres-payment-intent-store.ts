import { LockMode, UniqueConstraintViolationException } from "@mikro-orm/core";
// Type only: the SQL entity manager's query builder. The driver itself is
// loaded in create-orm.ts alone.
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PaymentAttemptOutcome, PaymentAttemptRecord } from "../../domain/payment-attempt.js";
import type { PaymentIntentRecord, PaymentIntentStatus } from "../../domain/payment-intent.js";
import type { InsertResult, ListQuery, PaymentIntentStore, StatusChange } from "../payment-intent-store.js";
import { withDatabaseErrors } from "./database-errors.js";
import { PaymentAttemptEntity, type PaymentAttemptRow } from "./entities/payment-attempt-entity.js";
import { PaymentIntentEntity, type PaymentIntentRow } from "./entities/payment-intent-entity.js";
import { PaymentIntentMethodEntity, type PaymentIntentMethodRow } from "./entities/payment-intent-method-entity.js";
import { PaymentIntentSplitEntity, type PaymentIntentSplitRow } from "./entities/payment-intent-split-entity.js";
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
    // Plain rows (execute with mapped names), not managed entities: building
    // and merging entities was most of a list page's CPU time (docs/BENCHMARKS.md).
    const [methods, splits] = await Promise.all([
      em
        .createQueryBuilder(PaymentIntentMethodEntity)
        .select("*")
        .where({ paymentIntentId: { $in: ids } })
        .orderBy({ position: "asc" })
        .execute<PaymentIntentMethodRow[]>("all", true),
      em
        .createQueryBuilder(PaymentIntentSplitEntity)
        .select("*")
        .where({ paymentIntentId: { $in: ids } })
        .orderBy({ position: "asc" })
        .execute<PaymentIntentSplitRow[]>("all", true),
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
      expiresAt: new Date(row.expiresAt),
      deletedAt: row.deletedAt ? new Date(row.deletedAt) : null,
    }));
  }

  /** Applies a conditional status change in em's transaction (if any); true when it took. */
  async function applyChange(em: EntityManager, merchantId: string, id: string, change: StatusChange): Promise<boolean> {
    const changed = await em.nativeUpdate(
      PaymentIntentEntity,
      { merchantId, id, status: change.from, deletedAt: null },
      {
        status: change.to,
        updatedAt: change.at,
        ...(change.transaction !== undefined ? { transaction: change.transaction } : {}),
      },
    );
    return changed === 1;
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
              expiresAt: record.expiresAt,
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
        return load(em, await listQuery(em, query).execute<PaymentIntentRow[]>("all", true));
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

    findByCheckoutToken: (token) => withDatabaseErrors(() => findOne(fork(), { checkoutToken: token })),

    transition: (merchantId, id, change) =>
      withDatabaseErrors(async () => {
        const em = fork();
        return (await applyChange(em, merchantId, id, change)) ? findOne(em, { merchantId, id }) : undefined;
      }),

    attempt: (merchantId, id, decide) =>
      withDatabaseErrors(() =>
        runInTransaction(root, async (tx) => {
          // The row lock makes concurrent attempts on one intent (two tabs, a
          // double submit) wait for each other: the second sees the first's result.
          const row = await tx.findOne(PaymentIntentEntity, { merchantId, id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
          if (!row) return undefined;
          const [intent] = await load(tx, [row]);
          const earlier = await tx.find(PaymentAttemptEntity, { paymentIntentId: id }, { orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
          const decision = await decide(intent!, earlier.map(toAttempt));
          if (decision.attempt) await tx.insert(PaymentAttemptEntity, { ...decision.attempt });
          if (decision.next) {
            await applyChange(tx, merchantId, id, {
              from: intent!.status,
              to: decision.next.status,
              at: decision.next.at,
              transaction: decision.next.transaction,
            });
          }
          return { intent: (await findOne(tx, { merchantId, id }))!, attempt: decision.attempt && { ...decision.attempt } };
        }),
      ),

    listAttempts: (merchantId, id) =>
      withDatabaseErrors(async () =>
        (
          await fork().find(
            PaymentAttemptEntity,
            { merchantId, paymentIntentId: id },
            { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
          )
        ).map(toAttempt),
      ),

    expireDue: (at, limit) =>
      withDatabaseErrors(async () => {
        const em = fork();
        // SKIP LOCKED: an intent being paid right now is left for the next sweep.
        const rows = (await em.getConnection().execute(
          `update payment_intents set status = 'expired', updated_at = ?
            where id in (select id from payment_intents
                          where status = 'pending' and deleted_at is null and expires_at <= ?
                          order by expires_at limit ? for update skip locked)
            returning id`,
          [at, at, limit],
        )) as { id: string }[];
        if (rows.length === 0) return [];
        return load(em, await em.find(PaymentIntentEntity, { id: { $in: rows.map((r) => r.id) } }));
      }),
  };
}

function toAttempt(row: PaymentAttemptRow): PaymentAttemptRecord {
  return {
    id: row.id,
    paymentIntentId: row.paymentIntentId,
    merchantId: row.merchantId,
    amount: BigInt(row.amount),
    method: row.method,
    outcome: row.outcome as PaymentAttemptOutcome,
    processorReference: row.processorReference,
    declineReason: row.declineReason ?? null,
    createdAt: new Date(row.createdAt),
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
