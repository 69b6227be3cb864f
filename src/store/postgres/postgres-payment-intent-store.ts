import { eventTypeOf } from "../../domain/event.js";
import { isOpenAttempt } from "../../domain/payment-attempt.js";
import type { PaymentIntentRecord, PaymentIntentStatus } from "../../domain/payment-intent.js";
import type { EventOutbox } from "../event-store.js";
import { decideSettlement } from "../attempt-settlement.js";
import type { AttemptSettled, InsertResult, IntentWithAccount, PaymentIntentStore } from "../payment-intent-store.js";
import { attemptTexts, checkStorableText, intentTexts, isStorableText } from "../storable-text.js";
import { readAccount } from "./account-rows.js";
import type { Database, Transaction } from "./database.js";
import { createEventContextCache } from "./event-context-cache.js";
import { createWithEvent } from "./creation-sql.js";
import { readEventContext, recordEvents, type EventChange } from "./event-sql.js";
import * as sql from "./intent-sql.js";
import type { StatementStep } from "./statement-pipeline.js";

export interface PostgresPaymentIntentStoreOptions {
  /**
   * Records an event with every change that makes one (EventOutbox,
   * store/event-store.ts); none: no events.
   */
  outbox?: EventOutbox;
}

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
 *
 * With an outbox, a change that records an event runs in an explicit
 * transaction of two round trips: the first makes the change and reads what
 * the outbox needs (the intent's list-item account, the merchant's enabled
 * endpoints) in the same statement; the event is rendered (JavaScript, so it
 * cannot share that round trip); the second writes the event with its
 * deliveries in one statement and commits. Two exceptions keep the hot paths
 * as they were: a checkout attempt reads the context with its row lock, and
 * a create whose context is remembered (event-context-cache.ts) renders its
 * event first and is one statement (creation-sql.ts) that checks the context
 * still holds and writes the intent with its event.
 */
export function createPostgresPaymentIntentStore(db: Database, options: PostgresPaymentIntentStoreOptions = {}): PaymentIntentStore {
  const { outbox } = options;
  const contexts = createEventContextCache();
  const first = <T>(rows: readonly (readonly (string | null)[])[], read: (row: readonly (string | null)[]) => T): T | undefined =>
    rows[0] ? read(rows[0]) : undefined;
  const storable = (...values: string[]) => values.every(isStorableText);

  function conflicting(record: PaymentIntentRecord, existing: PaymentIntentRecord | undefined): PaymentIntentRecord {
    if (!existing) throw new Error(`clientReference conflict without a stored intent (merchant ${record.merchantId})`);
    return existing;
  }

  async function readOne(step: StatementStep): Promise<PaymentIntentRecord | undefined> {
    const [result] = await db.run(false, [step]);
    return first(result!.rows, (row) => sql.readIntent(row));
  }

  /**
   * Runs a change statement (with the event context) in a transaction and
   * records an event per changed intent, from the status fromOf gives; the
   * events are announced after COMMIT. Nothing changed: nothing is written.
   */
  async function changeWithEvents(
    outbox: EventOutbox,
    step: StatementStep,
    fromOf: (intent: PaymentIntentRecord) => PaymentIntentStatus,
    at: Date,
  ): Promise<PaymentIntentRecord[]> {
    return db.transaction(async (tx) => {
      const [result] = await tx.run([step]);
      if (result!.rows.length === 0) return [];
      const changes: EventChange[] = [];
      const intents = result!.rows.map((row) => {
        const intent = sql.readIntent(row);
        const type = eventTypeOf({ from: fromOf(intent), to: intent.status, declinedAttempt: false });
        const context = readEventContext(row, sql.intentColumnCount);
        contexts.learn(intent, context);
        if (type) changes.push({ type, intent, context, at });
        return intent;
      });
      await commitWithEvents(tx, outbox, changes, []);
      return intents;
    });
  }

  /** Sends steps, the events of changes and COMMIT in one round trip; announces the events after it. */
  async function commitWithEvents(tx: Transaction, outbox: EventOutbox, changes: EventChange[], steps: StatementStep[]) {
    if (changes.length === 0) return tx.commit(steps);
    const recorded = recordEvents(outbox, changes);
    const results = await tx.commit([...steps, recorded.step]);
    outbox.committed(recorded.events, recorded.deliveries);
    return results;
  }

  return {
    async insert(record): Promise<InsertResult> {
      checkStorableText(intentTexts(record));
      if (outbox) {
        const remembered = contexts.forCreation(record);
        if (remembered) {
          const created = createWithEvent(outbox, {
            type: "payment_intent.created",
            intent: record,
            context: remembered,
            at: record.createdAt,
          });
          const [result] = await db.run(true, [created.step]);
          const row = result!.rows[0]!;
          if (row[1] === "t") {
            outbox.committed(created.events, created.deliveries);
            return { inserted: true, record };
          }
          if (row[0] === "t") {
            // A replay: nothing written.
            if (row[2] !== null) return { inserted: false, existing: sql.readIntent(row, 2) };
            const existing = await readOne(sql.findByReference(record.merchantId, record.livemode, record.clientReference));
            return { inserted: false, existing: conflicting(record, existing) };
          }
          // The context changed, and nothing was written: again, reading it.
          contexts.forget(record.merchantId);
        }
        return db.transaction(async (tx) => {
          const [result] = await tx.run([sql.insertIntent(record, true)]);
          const row = result!.rows[0]!;
          if (row[0] === "t") {
            const context = readEventContext(row, 1 + sql.intentColumnCount);
            contexts.learn(record, context);
            await commitWithEvents(tx, outbox, [{ type: "payment_intent.created", intent: record, context, at: record.createdAt }], []);
            return { inserted: true, record };
          }
          // A replay wrote nothing: the transaction is rolled back.
          if (row[1] !== null) return { inserted: false, existing: sql.readIntent(row, 1) };
          const [again] = await tx.run([sql.findByReference(record.merchantId, record.livemode, record.clientReference)]);
          return { inserted: false, existing: conflicting(record, first(again!.rows, (r) => sql.readIntent(r))) };
        });
      }
      const [result] = await db.run(true, [sql.insertIntent(record)]);
      const row = result!.rows[0]!;
      if (row[0] === "t") return { inserted: true, record };
      if (row[1] !== null) return { inserted: false, existing: sql.readIntent(row, 1) };
      // The reference was taken by a create that committed after this
      // statement's snapshot was taken (ON CONFLICT waited for it): a new
      // statement sees it. The one case of a second round trip.
      const existing = await readOne(sql.findByReference(record.merchantId, record.livemode, record.clientReference));
      return { inserted: false, existing: conflicting(record, existing) };
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
      const metaTexts = (query.meta ?? []).flatMap((e) => [e.name, e.value]);
      if (!storable(query.merchantId, query.clientReference ?? "", query.after?.id ?? "", ...metaTexts)) return [];
      const [result] = await db.run(false, [sql.listIntents(query)]);
      return result!.rows.map((row) => ({ intent: sql.readIntent(row), account: readAccount(row, sql.intentColumnCount) }));
    },

    async cancel(merchantId, id, at) {
      if (!storable(merchantId, id)) return undefined;
      if (outbox) return (await changeWithEvents(outbox, sql.cancelIntent(merchantId, id, at, true), () => "pending", at))[0];
      const [result] = await db.run(true, [sql.cancelIntent(merchantId, id, at)]);
      return first(result!.rows, (row) => sql.readIntent(row));
    },

    async findByCheckoutToken(token) {
      return storable(token) ? readOne(sql.findByCheckoutToken(token)) : undefined;
    },

    async transition(merchantId, id, change) {
      if (!storable(merchantId, id)) return undefined;
      checkStorableText([change.transaction]);
      if (outbox) {
        return (await changeWithEvents(outbox, sql.transitionIntent(merchantId, id, change, true), () => change.from, change.at))[0];
      }
      const [result] = await db.run(true, [sql.transitionIntent(merchantId, id, change)]);
      return first(result!.rows, (row) => sql.readIntent(row));
    },

    async listAttempts(merchantId, id) {
      if (!storable(merchantId, id)) return [];
      const [result] = await db.run(false, [sql.listAttempts(merchantId, id)]);
      return result!.rows.map((row) => sql.readAttempt(row));
    },

    async beginAttempt(attempt, checkAfter) {
      if (!storable(attempt.merchantId, attempt.paymentIntentId)) return undefined;
      checkStorableText(attemptTexts(attempt));
      let begun: PaymentIntentRecord | undefined;
      if (outbox) {
        begun = (await changeWithEvents(outbox, sql.beginAttempt(attempt, checkAfter, true), () => "pending", attempt.createdAt))[0];
      } else {
        const [result] = await db.run(true, [sql.beginAttempt(attempt, checkAfter)]);
        begun = first(result!.rows, (row) => sql.readIntent(row));
      }
      if (begun) return { begun: true, intent: begun, attempt: structuredClone(attempt) };
      const current = await readOne(sql.findById(attempt.merchantId, attempt.paymentIntentId));
      return current && { begun: false, intent: current };
    },

    async settleAttempt(merchantId, attemptId, settlement, options) {
      if (!storable(merchantId, attemptId)) return undefined;
      checkStorableText([
        settlement.processorReference,
        settlement.outcome === "declined" ? settlement.declineReason : null,
        settlement.outcome === "requires_action" ? settlement.url : null,
        options.leaseToken,
      ]);
      return db.transaction(async (tx): Promise<AttemptSettled | undefined> => {
        // One round trip: BEGIN, the deadline, the attempt and its intent locked, read with what the decision needs.
        const [locked] = await tx.run([sql.lockAttempt(merchantId, attemptId)]);
        const row = locked!.rows[0];
        if (!row) return undefined;
        const attempt = sql.readAttempt(row);
        const leaseToken = row[sql.attemptColumnCount] ?? null;
        const intentStart = sql.attemptColumnCount + 1;
        const intent = sql.readIntent(row, intentStart);
        const declinedBefore = Number(row[intentStart + sql.intentColumnCount]!);
        const unchanged = { intent, attempt, changed: false };
        if (options.leaseToken !== undefined && leaseToken !== options.leaseToken) return unchanged;
        const change = decideSettlement(intent, attempt, declinedBefore, settlement, options);
        if (!change) return unchanged;
        const steps = [sql.writeAttempt(change.attempt, isOpenAttempt(change.attempt.outcome) ? (options.checkAfter ?? options.at) : null)];
        if (change.intentChanged) steps.push(sql.writeIntentState(change.intent));
        const changes: EventChange[] = [];
        const type = eventTypeOf({ from: change.from, to: change.intent.status, declinedAttempt: change.declinedAttempt });
        if (outbox && type) {
          const context = readEventContext(row, intentStart + sql.intentColumnCount + 1);
          contexts.learn(change.intent, context);
          changes.push({ type, intent: structuredClone(change.intent), context, at: options.at });
        }
        // The writes (and the event) and COMMIT in one round trip.
        if (outbox) await commitWithEvents(tx, outbox, changes, steps);
        else await tx.commit(steps);
        return { intent: change.intent, attempt: change.attempt, changed: true, ...(change.lateSuccess && { lateSuccess: change.lateSuccess }) };
      });
    },

    async postponeAttempt(merchantId, attemptId, postponement) {
      if (!storable(merchantId, attemptId)) return false;
      checkStorableText([postponement.processorReference, postponement.leaseToken]);
      const [result] = await db.run(true, [sql.postponeAttempt(merchantId, attemptId, postponement)]);
      return result!.rows.length > 0;
    },

    async claimDueAttempts(now, limit, leaseMs) {
      if (limit < 1) return [];
      const [result] = await db.run(true, [sql.claimDueAttempts(now, limit, leaseMs)]);
      return result!.rows.map((row) => ({ attempt: sql.readAttempt(row), leaseToken: row[sql.attemptColumnCount]! }));
    },

    async alarmOpenAttempts(olderThan, limit) {
      if (limit < 1) return [];
      const [result] = await db.run(true, [sql.alarmOpenAttempts(olderThan, limit)]);
      return result!.rows.map((row) => sql.readAttempt(row));
    },

    async findAttempt(merchantId, attemptId) {
      if (!storable(merchantId, attemptId)) return undefined;
      const [result] = await db.run(false, [sql.findAttempt(merchantId, attemptId)]);
      return first(result!.rows, (row) => sql.readAttempt(row));
    },

    async findAttemptForProcessor(processor, idempotencyKey) {
      if (!storable(processor, idempotencyKey)) return undefined;
      const [result] = await db.run(false, [sql.findAttemptForProcessor(processor, idempotencyKey)]);
      return first(result!.rows, (row) => sql.readAttempt(row));
    },

    async expireDue(at, limit) {
      if (outbox) return changeWithEvents(outbox, sql.expireDue(at, limit, true), () => "pending", at);
      const [result] = await db.run(true, [sql.expireDue(at, limit)]);
      return result!.rows.map((row) => sql.readIntent(row));
    },
  };
}
