import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord, PaymentIntentStatus } from "../domain/payment-intent.js";
import type { SettlementAccountRecord } from "../domain/settlement-account.js";

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
  /**
   * A pending intent whose expiresAt is at or before `now` counts as expired:
   * "pending" leaves it out and "expired" takes it in. Records come back as
   * stored; listing never expires anything.
   */
  status?: PaymentIntentStatus;
  /** The time lapsed pending intents are judged against. */
  now: Date;
}

/**
 * An intent with the settlement account a list item shows (§2.4): the
 * account of its first split; without splits, the merchant's earliest
 * registered account (createdAt, then id, ascending); null when the merchant
 * has none.
 */
export interface IntentWithAccount {
  intent: PaymentIntentRecord;
  account: SettlementAccountRecord | null;
}

/** InsertResult says whether the row was written or the reference was taken. */
export type InsertResult =
  | { inserted: true; record: PaymentIntentRecord }
  | { inserted: false; existing: PaymentIntentRecord };

/** A conditional status change: applied only while the intent is still `from` and live. */
export interface StatusChange {
  from: PaymentIntentStatus;
  to: PaymentIntentStatus;
  at: Date;
  /** Set with the change to successful: the successful attempt's reference. */
  transaction?: string;
}

/** What the service decided under the attempt lock: the attempt to record and the new state. */
export interface AttemptDecision {
  /** null when nothing was tried (the intent could not be paid). */
  attempt: PaymentAttemptRecord | null;
  /** null to leave the intent as it is. */
  next: { status: PaymentIntentStatus; transaction?: string; at: Date } | null;
}

/** The outcome of an attempt: the intent after it, and the attempt recorded (if any). */
export interface AttemptResult {
  intent: PaymentIntentRecord;
  attempt: PaymentAttemptRecord | null;
}

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
  /** Reads one intent of the merchant with its account (as list items show it), deleted ones included. */
  findWithAccount(merchantId: string, id: string): Promise<IntentWithAccount | undefined>;
  /** Reads a page of live intents with their accounts, newest first. */
  list(query: ListQuery): Promise<IntentWithAccount[]>;
  /**
   * Cancels and soft-deletes the intent if it is still pending and live;
   * returns the updated record, or undefined when that condition did not hold.
   */
  cancel(merchantId: string, id: string, at: Date): Promise<PaymentIntentRecord | undefined>;
  /**
   * Finds an intent by the secret of its checkout link, deleted ones included.
   * Not merchant-scoped: the unguessable token is the customer's capability.
   */
  findByCheckoutToken(token: string): Promise<PaymentIntentRecord | undefined>;
  /** Applies change if the live intent is still change.from; returns the updated record or undefined. */
  transition(merchantId: string, id: string, change: StatusChange): Promise<PaymentIntentRecord | undefined>;
  /**
   * Runs decide with the intent locked against every other attempt on it (two
   * tabs, a double-submitted form), then writes the attempt and the new state
   * it returns in one atomic step. decide sees the intent and its earlier
   * attempts; if it throws, nothing is written. undefined: no such intent.
   */
  attempt(
    merchantId: string,
    id: string,
    decide: (intent: PaymentIntentRecord, attempts: PaymentAttemptRecord[]) => Promise<AttemptDecision>,
  ): Promise<AttemptResult | undefined>;
  /** Every attempt on the intent, oldest first. */
  listAttempts(merchantId: string, id: string): Promise<PaymentAttemptRecord[]>;
  /** Moves up to limit live pending intents whose expiresAt is at or before `at` to expired; returns them. */
  expireDue(at: Date, limit: number): Promise<PaymentIntentRecord[]>;
}
