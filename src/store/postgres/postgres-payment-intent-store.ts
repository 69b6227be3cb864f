import type { PaymentIntentRecord } from "../../domain/payment-intent.js";
import type { InsertResult, IntentWithAccount, PaymentIntentStore } from "../payment-intent-store.js";
import { checkStorableText, isStorableText } from "../storable-text.js";
import { readAccount } from "./account-rows.js";
import type { Database } from "./database.js";
import * as sql from "./intent-sql.js";
import type { PipelineStep } from "./pipeline.js";

/**
 * createPostgresPaymentIntentStore keeps intents in PostgreSQL. Every call is
 * one round trip on the shared pool, under the call's deadline (database.ts),
 * except the checkout attempt, which holds a row lock across the processor
 * call (two round trips). Values are bind parameters only.
 *
 * A string that PostgreSQL cannot store (NUL, a lone surrogate) can match no
 * stored row: lookups with one answer "not found" without asking the
 * database, and writes with one fail with InvalidArgument, as in the
 * in-memory store.
 */
export function createPostgresPaymentIntentStore(db: Database): PaymentIntentStore {
  const first = <T>(rows: readonly (readonly (string | null)[])[], read: (row: readonly (string | null)[]) => T): T | undefined =>
    rows[0] ? read(rows[0]) : undefined;
  const storable = (...values: string[]) => values.every(isStorableText);

  async function readOne(step: PipelineStep): Promise<PaymentIntentRecord | undefined> {
    const [result] = await db.run(false, [step]);
    return first(result!.rows, (row) => sql.readIntent(row));
  }

  return {
    async insert(record): Promise<InsertResult> {
      checkStorableText([
        record.id,
        record.merchantId,
        record.customerEmail,
        record.receiptEmail,
        record.clientReference,
        record.callbackUrl,
        record.transaction,
        record.checkoutToken,
        record.requestFingerprint,
        ...record.paymentMethods,
        ...record.splits.map((s) => s.settlementAccountId),
      ]);
      const [result] = await db.run(true, [sql.insertIntent(record)]);
      const row = result!.rows[0]!;
      if (row[0] === "t") return { inserted: true, record: structuredClone(record) };
      if (row[1] !== null) return { inserted: false, existing: sql.readIntent(row, 1) };
      // The reference was taken by a create that committed after this
      // statement's snapshot was taken (ON CONFLICT waited for it): a new
      // statement sees it. The one case of a second round trip.
      const existing = await readOne(sql.findByReference(record.merchantId, record.clientReference));
      if (!existing) throw new Error(`clientReference conflict without a stored intent (merchant ${record.merchantId})`);
      return { inserted: false, existing };
    },

    async findById(merchantId, id) {
      return storable(merchantId, id) ? readOne(sql.findById(merchantId, id)) : undefined;
    },

    async findWithAccount(merchantId, id): Promise<IntentWithAccount | undefined> {
      if (!storable(merchantId, id)) return undefined;
      const [result] = await db.run(false, [sql.findWithAccount(merchantId, id)]);
      return first(result!.rows, (row) => ({ intent: sql.readIntent(row), account: readAccount(row, sql.intentColumnCount) }));
    },

    async list(query) {
      if (!storable(query.merchantId, query.clientReference ?? "", query.after?.id ?? "")) return [];
      const [result] = await db.run(false, [sql.listIntents(query)]);
      return result!.rows.map((row) => ({ intent: sql.readIntent(row), account: readAccount(row, sql.intentColumnCount) }));
    },

    async cancel(merchantId, id, at) {
      if (!storable(merchantId, id)) return undefined;
      const [result] = await db.run(true, [sql.cancelIntent(merchantId, id, at)]);
      return first(result!.rows, (row) => sql.readIntent(row));
    },

    async findByCheckoutToken(token) {
      return storable(token) ? readOne(sql.findByCheckoutToken(token)) : undefined;
    },

    async transition(merchantId, id, change) {
      if (!storable(merchantId, id)) return undefined;
      checkStorableText([change.transaction]);
      const [result] = await db.run(true, [sql.transitionIntent(merchantId, id, change)]);
      return first(result!.rows, (row) => sql.readIntent(row));
    },

    async attempt(merchantId, id, decide) {
      if (!storable(merchantId, id)) return undefined;
      return db.transaction(async (tx) => {
        // One round trip: BEGIN, the deadline, the row lock (concurrent
        // attempts on the intent wait here, up to the lock timeout), then the
        // earlier attempts, read by a statement of its own so that it sees
        // what the attempt that held the lock before committed.
        const [locked, earlier] = await tx.run([sql.lockIntent(merchantId, id), sql.listAttempts(merchantId, id)]);
        const intent = first(locked!.rows, (row) => sql.readIntent(row));
        if (!intent) return undefined;
        const decision = await decide(intent, earlier!.rows.map(sql.readAttempt));
        if (!decision.attempt && !decision.next) return { intent, attempt: null };
        const steps: PipelineStep[] = [];
        if (decision.attempt) {
          checkStorableText([
            decision.attempt.id,
            decision.attempt.paymentIntentId,
            decision.attempt.merchantId,
            decision.attempt.method,
            decision.attempt.processorReference,
            decision.attempt.declineReason,
          ]);
          steps.push(sql.insertAttempt(decision.attempt));
        }
        if (decision.next) {
          checkStorableText([decision.next.transaction]);
          steps.push(
            sql.transitionIntent(merchantId, id, {
              from: intent.status,
              to: decision.next.status,
              at: decision.next.at,
              transaction: decision.next.transaction,
            }),
          );
        }
        steps.push(sql.findById(merchantId, id));
        // The writes and COMMIT in one round trip, sent only while the deadline holds.
        const results = await tx.commit(steps);
        const after = first(results[results.length - 1]!.rows, (row) => sql.readIntent(row))!;
        return { intent: after, attempt: decision.attempt && { ...decision.attempt, createdAt: new Date(decision.attempt.createdAt) } };
      });
    },

    async listAttempts(merchantId, id) {
      if (!storable(merchantId, id)) return [];
      const [result] = await db.run(false, [sql.listAttempts(merchantId, id)]);
      return result!.rows.map(sql.readAttempt);
    },

    async expireDue(at, limit) {
      const [result] = await db.run(true, [sql.expireDue(at, limit)]);
      return result!.rows.map((row) => sql.readIntent(row));
    },
  };
}
