import type { PaymentIntentRecord } from "../../domain/payment-intent.js";
import type { InsertResult, ListQuery, PaymentIntentStore } from "../payment-intent-store.js";
import { compareNewestFirst } from "./compare-newest-first.js";

/**
 * createMemoryPaymentIntentStore keeps intents in process memory, behaving as
 * the PostgreSQL store does. Records are copied in and out so a caller can
 * never change stored state by mutating what it holds.
 */
export function createMemoryPaymentIntentStore(): PaymentIntentStore {
  const byId = new Map<string, PaymentIntentRecord>();
  const idByReference = new Map<string, string>();
  const checkoutTokens = new Set<string>();
  const referenceKey = (merchantId: string, clientReference: string) => `${merchantId}\u0000${clientReference}`;

  return {
    async insert(record): Promise<InsertResult> {
      const key = referenceKey(record.merchantId, record.clientReference);
      const existingId = idByReference.get(key);
      if (existingId !== undefined) return { inserted: false, existing: copy(byId.get(existingId)!) };
      // As the primary key and unique constraints do in PostgreSQL: an id
      // and a checkout token are never reused.
      if (byId.has(record.id)) throw new Error(`payment intent id ${record.id} already exists`);
      if (checkoutTokens.has(record.checkoutToken)) throw new Error("checkout token already exists");
      // Check and write happen in one synchronous step, so concurrent inserts
      // of one reference cannot both succeed.
      byId.set(record.id, copy(record));
      idByReference.set(key, record.id);
      checkoutTokens.add(record.checkoutToken);
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

    async cancel(merchantId, id, at) {
      const found = byId.get(id);
      if (!found || found.merchantId !== merchantId || found.deletedAt !== null || found.status !== "pending") {
        return undefined;
      }
      const updated = copy({ ...found, status: "cancelled", updatedAt: at, deletedAt: at });
      byId.set(id, updated);
      return copy(updated);
    },
  };
}

function copy(record: PaymentIntentRecord): PaymentIntentRecord {
  return {
    ...record,
    paymentMethods: [...record.paymentMethods],
    splits: record.splits.map((split) => ({ ...split })),
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
    deletedAt: record.deletedAt && new Date(record.deletedAt),
  };
}
