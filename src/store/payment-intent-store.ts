import type { PaymentIntentRecord, PaymentIntentStatus } from "../domain/payment-intent.js";

/** Position after which a keyset page starts: the last item of the previous page. */
export interface ListCursor {
  createdAt: Date;
  id: string;
}

/** ListQuery selects one page of a merchant's live (not deleted) intents. */
export interface ListQuery {
  merchantId: string;
  limit: number;
  after?: ListCursor;
  clientReference?: string;
  status?: PaymentIntentStatus;
}

/** InsertResult says whether the row was written or the reference was taken. */
export type InsertResult =
  | { inserted: true; record: PaymentIntentRecord }
  | { inserted: false; existing: PaymentIntentRecord };

/**
 * PaymentIntentStore is the port to payment-intent storage. Every method is
 * scoped to one merchant. Implementations must agree on ordering
 * (createdAt desc, then id desc), on uniqueness of (merchantId,
 * clientReference) including deleted intents, and on all-or-nothing writes of
 * an intent with its splits: the store contract suite checks each of them.
 */
export interface PaymentIntentStore {
  /**
   * Writes a new intent unless the merchant already has one with the same
   * clientReference, in which case that one is returned and nothing is written.
   * Atomic: concurrent inserts of one reference write exactly one row.
   */
  insert(record: PaymentIntentRecord): Promise<InsertResult>;
  /** Reads one intent of the merchant, deleted ones included. */
  findById(merchantId: string, id: string): Promise<PaymentIntentRecord | undefined>;
  /** Reads a page of live intents, newest first. */
  list(query: ListQuery): Promise<PaymentIntentRecord[]>;
  /**
   * Cancels and soft-deletes the intent if it is still pending and live;
   * returns the updated record, or undefined when that condition did not hold.
   */
  cancel(merchantId: string, id: string, at: Date): Promise<PaymentIntentRecord | undefined>;
}
