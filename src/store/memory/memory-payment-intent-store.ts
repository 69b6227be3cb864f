import type { PaymentAttemptRecord } from "../../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../../domain/payment-intent.js";
import type { InsertResult, ListQuery, PaymentIntentStore, StatusChange } from "../payment-intent-store.js";
import { compareNewestFirst } from "./compare-newest-first.js";

/**
 * createMemoryPaymentIntentStore keeps intents in process memory, behaving as
 * the PostgreSQL store does. Records are copied in and out so a caller can
 * never change stored state by mutating what it holds.
 */
export function createMemoryPaymentIntentStore(): PaymentIntentStore {
  const byId = new Map<string, PaymentIntentRecord>();
  const idByReference = new Map<string, string>();
  const idByCheckoutToken = new Map<string, string>();
  const attemptsById = new Map<string, PaymentAttemptRecord[]>();
  // One queue per intent: every status write on it (attempts, cancel,
  // transitions, expiry) runs one after another, as row locks make them do in
  // PostgreSQL; an attempt waiting on its processor holds the queue.
  const queues = new Map<string, Promise<unknown>>();
  function serialized<T>(id: string, work: () => Promise<T>): Promise<T> {
    const run = (queues.get(id) ?? Promise.resolve()).then(work);
    const settled = run.catch(() => {});
    queues.set(id, settled);
    void settled.then(() => {
      if (queues.get(id) === settled) queues.delete(id);
    });
    return run;
  }

  /** Applies a status change to a live intent that is still change.from. */
  function applyChange(merchantId: string, id: string, change: StatusChange): PaymentIntentRecord | undefined {
    const found = byId.get(id);
    if (!found || found.merchantId !== merchantId || found.deletedAt !== null || found.status !== change.from) return undefined;
    const updated = copy({
      ...found,
      status: change.to,
      updatedAt: change.at,
      transaction: change.transaction ?? found.transaction,
    });
    byId.set(id, updated);
    return copy(updated);
  }
  const referenceKey = (merchantId: string, clientReference: string) => `${merchantId}\u0000${clientReference}`;

  return {
    async insert(record): Promise<InsertResult> {
      const key = referenceKey(record.merchantId, record.clientReference);
      const existingId = idByReference.get(key);
      if (existingId !== undefined) return { inserted: false, existing: copy(byId.get(existingId)!) };
      // As the primary key and unique constraints do in PostgreSQL: an id
      // and a checkout token are never reused.
      if (byId.has(record.id)) throw new Error(`payment intent id ${record.id} already exists`);
      if (idByCheckoutToken.has(record.checkoutToken)) throw new Error("checkout token already exists");
      // Check and write happen in one synchronous step, so concurrent inserts
      // of one reference cannot both succeed.
      byId.set(record.id, copy(record));
      idByReference.set(key, record.id);
      idByCheckoutToken.set(record.checkoutToken, record.id);
      return { inserted: true, record: copy(record) };
    },

    async findById(merchantId, id) {
      const found = byId.get(id);
      return found && found.merchantId === merchantId ? copy(found) : undefined;
    },

    async list(query: ListQuery) {
      const rows: PaymentIntentRecord[] = [];
      for (const row of byId.values()) {
        if (row.merchantId !== query.merchantId || row.deletedAt !== null) continue;
        if (query.clientReference !== undefined && row.clientReference !== query.clientReference) continue;
        if (query.status !== undefined && row.status !== query.status) continue;
        if (query.after && compareNewestFirst(query.after, row) >= 0) continue;
        rows.push(row);
      }
      return rows.sort(compareNewestFirst).slice(0, query.limit).map(copy);
    },

    cancel: (merchantId, id, at) => serialized(id, async () => {
      const found = byId.get(id);
      if (!found || found.merchantId !== merchantId || found.deletedAt !== null || found.status !== "pending") {
        return undefined;
      }
      const updated = copy({ ...found, status: "cancelled", updatedAt: at, deletedAt: at });
      byId.set(id, updated);
      return copy(updated);
    }),

    async findByCheckoutToken(token) {
      const id = idByCheckoutToken.get(token);
      return id === undefined ? undefined : copy(byId.get(id)!);
    },

    transition: (merchantId, id, change) => serialized(id, async () => applyChange(merchantId, id, change)),

    attempt(merchantId, id, decide) {
      return serialized(id, async () => {
        const found = byId.get(id);
        if (!found || found.merchantId !== merchantId) return undefined;
        const earlier = (attemptsById.get(id) ?? []).map(copyAttempt);
        const decision = await decide(copy(found), earlier);
        if (decision.attempt) {
          attemptsById.set(id, [...(attemptsById.get(id) ?? []), copyAttempt(decision.attempt)]);
        }
        if (decision.next) {
          applyChange(merchantId, id, { from: found.status, to: decision.next.status, at: decision.next.at, transaction: decision.next.transaction });
        }
        return { intent: copy(byId.get(id)!), attempt: decision.attempt && copyAttempt(decision.attempt) };
      });
    },

    async listAttempts(merchantId, id) {
      const found = byId.get(id);
      if (!found || found.merchantId !== merchantId) return [];
      return (attemptsById.get(id) ?? []).map(copyAttempt);
    },

    async expireDue(at, limit) {
      const due = [...byId.values()]
        .filter((row) => row.status === "pending" && row.deletedAt === null && row.expiresAt.getTime() <= at.getTime())
        .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
        .slice(0, limit);
      const expired = await Promise.all(
        due.map((row) => serialized(row.id, async () => applyChange(row.merchantId, row.id, { from: "pending", to: "expired", at }))),
      );
      return expired.filter((row): row is PaymentIntentRecord => row !== undefined);
    },
  };
}

function copyAttempt(attempt: PaymentAttemptRecord): PaymentAttemptRecord {
  return { ...attempt, createdAt: new Date(attempt.createdAt) };
}

function copy(record: PaymentIntentRecord): PaymentIntentRecord {
  return {
    ...record,
    paymentMethods: [...record.paymentMethods],
    splits: record.splits.map((split) => ({ ...split })),
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
    expiresAt: new Date(record.expiresAt),
    deletedAt: record.deletedAt && new Date(record.deletedAt),
  };
}
