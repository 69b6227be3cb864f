import { ConnectError } from "@connectrpc/connect";
import { refundEventTypeOf } from "../../domain/event.js";
import { isAutomaticRefund, type RefundRecord } from "../../domain/refund.js";
import type { EventOutbox } from "../event-store.js";
import type { RefundStore, Reservation } from "../refund-store.js";
import { checkStorableText, isStorableText, refundTexts } from "../storable-text.js";
import type { Database } from "./database.js";
import { readEventContext, recordEvents, type EventChange } from "./event-sql.js";
import * as intentSql from "./intent-sql.js";
import * as sql from "./refund-sql.js";
import type { StatementStep } from "./statement-pipeline.js";

export interface PostgresRefundStoreOptions {
  /** Records refund.* events with the changes; none: no events. */
  outbox?: EventOutbox;
}

/** The unique keys a reservation's insert can meet when another transaction took its key first. */
const refundKeys = new Set(["refunds_client_reference_key", "refunds_automatic_key"]);

/**
 * createPostgresRefundStore keeps refunds in PostgreSQL
 * (store/refund-store.ts). A reservation is one short transaction of two
 * round trips: BEGIN, the intent's row lock (concurrent refunds of the
 * intent wait here), the refund under the key and the outbox's context; then,
 * decided in JavaScript, the insert, the intent's amount_refunded, the event
 * and COMMIT. A settlement is two: the compare-and-set (which also gives a
 * failed refund's amount back), then the event and COMMIT. No transaction is
 * open while a processor is asked anything.
 */
export function createPostgresRefundStore(db: Database, options: PostgresRefundStoreOptions = {}): RefundStore {
  const { outbox } = options;
  const storable = (...values: string[]) => values.every(isStorableText);

  async function readOne(step: StatementStep): Promise<RefundRecord | undefined> {
    const [result] = await db.run(false, [step]);
    const row = result!.rows[0];
    return row && sql.readRefund(row);
  }

  /** Sends steps, the events of changes and COMMIT in one round trip; announces the events after it. */
  async function commitWithEvents(commit: (steps: StatementStep[]) => Promise<unknown>, changes: EventChange[], steps: StatementStep[]) {
    if (!outbox || changes.length === 0) return commit(steps);
    const recorded = recordEvents(outbox, changes);
    const results = await commit([...steps, recorded.step]);
    outbox.committed(recorded.events, recorded.deliveries);
    return results;
  }

  const reserveOnce: RefundStore["reserve"] = (merchantId, paymentIntentId, key, decide) =>
    db.transaction(async (tx): Promise<Reservation | undefined> => {
      // Read after the lock, by statements of their own, so they see what the
      // transaction that held the lock before committed.
      const [locked, existingRows, context] = await tx.run([
        intentSql.lockIntent(merchantId, paymentIntentId),
        sql.findByKey(merchantId, key),
        intentSql.eventContextOf(merchantId, paymentIntentId),
      ]);
      const lockedRow = locked!.rows[0];
      if (!lockedRow) return undefined;
      const intent = intentSql.readIntent(lockedRow);
      const existingRow = existingRows!.rows[0];
      const existing = existingRow && sql.readRefund(existingRow);
      const refund = decide(intent, existing);
      if (!refund) {
        if (!existing) throw new Error("a reservation decided nothing, and no refund is stored under its key");
        return { intent, refund: existing, reserved: false };
      }
      checkStorableText(refundTexts(refund));
      const counts = !isAutomaticRefund(refund);
      const steps = [sql.insertRefund(refund)];
      if (counts) steps.push(sql.addRefunded(merchantId, paymentIntentId, refund.amount, refund.createdAt));
      const after = counts ? { ...intent, amountRefunded: intent.amountRefunded + refund.amount, updatedAt: refund.createdAt } : intent;
      const type = refundEventTypeOf({ from: null, to: refund.status })!;
      const changes: EventChange[] = [{ type, intent: structuredClone(after), context: readEventContext(context!.rows[0]!, 0), at: refund.createdAt, refund }];
      await commitWithEvents((all) => tx.commit(all), changes, steps);
      return { intent: after, refund: structuredClone(refund), reserved: true };
    });

  return {
    async reserve(merchantId, paymentIntentId, key, decide) {
      if (!storable(merchantId, paymentIntentId, "clientReference" in key ? key.clientReference : key.automaticFor)) return undefined;
      try {
        return await reserveOnce(merchantId, paymentIntentId, key, decide);
      } catch (error) {
        // Another intent's refund took the key between our read and our
        // insert (its transaction held no lock we wait on): once more, and
        // the read sees it.
        if (!takenKey(error)) throw error;
        return reserveOnce(merchantId, paymentIntentId, key, decide);
      }
    },

    async settle(merchantId, id, settlement) {
      if (!storable(merchantId, id)) return undefined;
      checkStorableText([settlement.processorReference, settlement.failureReason, settlement.leaseToken]);
      return db.transaction(async (tx) => {
        const [result] = await tx.run([sql.settleRefund(merchantId, id, settlement)]);
        const row = result!.rows[0];
        if (!row) return undefined;
        const refund = sql.readRefund(row);
        const intent = intentSql.readIntent(row, sql.refundColumnCount);
        const type = refundEventTypeOf({ from: "pending", to: refund.status })!;
        const context = readEventContext(row, sql.refundColumnCount + intentSql.intentColumnCount);
        await commitWithEvents((all) => tx.commit(all), [{ type, intent, context, at: settlement.at, refund }], []);
        return { refund, intent };
      });
    },

    async postpone(merchantId, id, postponement) {
      if (!storable(merchantId, id)) return false;
      checkStorableText([postponement.processorReference, postponement.leaseToken]);
      const [result] = await db.run(true, [sql.postponeRefund(merchantId, id, postponement)]);
      return result!.rows.length > 0;
    },

    async claimDue(now, limit, leaseMs) {
      if (limit < 1) return [];
      const [result] = await db.run(true, [sql.claimDue(now, limit, leaseMs)]);
      return result!.rows.map((row) => ({ refund: sql.readRefund(row), leaseToken: row[sql.refundColumnCount]! }));
    },

    async findById(merchantId, id) {
      return storable(merchantId, id) ? readOne(sql.findById(merchantId, id)) : undefined;
    },

    async findForProcessor(id) {
      return storable(id) ? readOne(sql.findForProcessor(id)) : undefined;
    },

    async listByIntent(query) {
      if (!storable(query.merchantId, query.paymentIntentId, query.after?.id ?? "")) return [];
      const [result] = await db.run(false, [sql.listByIntent(query)]);
      return result!.rows.map((row) => sql.readRefund(row));
    },
  };
}

/** Whether a store error is a reservation's insert meeting a refund key taken by another transaction. */
function takenKey(error: unknown): boolean {
  const cause = error instanceof ConnectError ? error.cause : error;
  const { code, constraint } = (cause ?? {}) as { code?: string; constraint?: string };
  return code === "23505" && constraint !== undefined && refundKeys.has(constraint);
}
