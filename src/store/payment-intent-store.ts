import type { LateSuccessReason } from "../domain/late-success.js";
import type { MetaEntry } from "../domain/meta.js";
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
  /** Only intents of this mode (issue 23, §1). */
  livemode: boolean;
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
  /** Only intents whose meta has every one of these entries (each name once). */
  meta?: readonly MetaEntry[];
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

/** What beginAttempt did: recorded the attempt (the intent is processing now), or found the intent not payable. */
export type BeginResult =
  | { begun: true; intent: PaymentIntentRecord; attempt: PaymentAttemptRecord }
  | { begun: false; intent: PaymentIntentRecord };

/**
 * An attempt's outcome as a store applies it: final (succeeded, declined),
 * or requires_action (a processing attempt sends the customer to url).
 */
export type AttemptSettlement =
  | { outcome: "succeeded"; processorReference: string }
  | { outcome: "declined"; processorReference: string | null; declineReason: string }
  | { outcome: "requires_action"; processorReference: string; url: string };

/** How settleAttempt applies a settlement. */
export interface SettleAttemptOptions {
  at: Date;
  /** Declined attempts (this one included) after which the intent fails: MAX_PAYMENT_ATTEMPTS. */
  maxAttempts: number;
  /** A reconciler's claim: applies only while the attempt still carries this lease (and gives it back). */
  leaseToken?: string;
  /** When the reconciler asks about a requires_action attempt next. */
  checkAfter?: Date;
}

/** What settleAttempt did: the attempt and intent as they are now, whether it changed them, and a late success it recorded. */
export interface AttemptSettled {
  intent: PaymentIntentRecord;
  attempt: PaymentAttemptRecord;
  changed: boolean;
  lateSuccess?: LateSuccessReason;
}

/** An open attempt the processor still has: when to ask again. */
export interface AttemptPostponement {
  checkAfter: Date;
  /** The processor's reference, once given; null keeps the one stored. */
  processorReference: string | null;
  /** A reconciler's claim: applies only while the attempt carries this lease (which it gives back). */
  leaseToken?: string;
}

/** An open attempt claimed by one reconciler for one check. */
export interface ClaimedAttempt {
  attempt: PaymentAttemptRecord;
  leaseToken: string;
}

/**
 * PaymentIntentStore is the port to payment-intent storage. Every method is
 * scoped to one merchant. Implementations must agree on ordering
 * (createdAt desc, then id desc), on uniqueness of (merchantId,
 * livemode, clientReference) including deleted intents, and on all-or-nothing writes of
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
  /** Every attempt on the intent, oldest first. */
  listAttempts(merchantId: string, id: string): Promise<PaymentAttemptRecord[]>;
  /**
   * The first step of a payment, one short atomic step that calls no
   * processor: if the intent is live, pending and not past expiresAt (at
   * attempt.createdAt), records attempt (outcome processing, due for the
   * reconciler at checkAfter) and moves the intent to processing, with
   * payment_intent.processing; else writes nothing. undefined: no such intent.
   */
  beginAttempt(attempt: PaymentAttemptRecord, checkAfter: Date): Promise<BeginResult | undefined>;
  /**
   * Applies an attempt's outcome once, in one short atomic step with the
   * attempt and its intent locked. A final attempt never changes again (a
   * repeat or a late message answers changed: false), nor does one whose
   * lease the caller no longer holds. A success for a waiting intent
   * (processing, requires_action, pending) makes it successful; for any
   * other it is recorded as a late success (payment_after_close, or
   * duplicate_payment when another attempt paid it) and the intent keeps its
   * status. A decline sends a waiting intent back to pending, or to failed
   * at maxAttempts declines. requires_action applies to a processing
   * attempt only and moves the intent along with its next action.
   * undefined: no such attempt of the merchant.
   */
  settleAttempt(merchantId: string, attemptId: string, settlement: AttemptSettlement, options: SettleAttemptOptions): Promise<AttemptSettled | undefined>;
  /** Keeps an open attempt open until checkAfter; false when it is settled (or the lease is no longer ours). */
  postponeAttempt(merchantId: string, attemptId: string, postponement: AttemptPostponement): Promise<boolean>;
  /**
   * Claims up to limit open attempts of any merchant due at now (checkAfter
   * <= now) and not under another unexpired lease, each with a fresh token
   * for leaseMs, measured on the implementation's own clock (as the delivery
   * queue's and refunds' claims are).
   */
  claimDueAttempts(now: Date, limit: number, leaseMs: number): Promise<ClaimedAttempt[]>;
  /**
   * Marks up to limit open attempts created before olderThan that were not
   * marked yet, and returns them: each is raised as an alarm once.
   */
  alarmOpenAttempts(olderThan: Date, limit: number): Promise<PaymentAttemptRecord[]>;
  /** Reads one attempt of the merchant. */
  findAttempt(merchantId: string, attemptId: string): Promise<PaymentAttemptRecord | undefined>;
  /**
   * Finds an attempt by its processor and idempotency key alone, for a
   * processor's webhook notice, which names no merchant.
   */
  findAttemptForProcessor(processor: string, idempotencyKey: string): Promise<PaymentAttemptRecord | undefined>;
  /** Moves up to limit live pending intents whose expiresAt is at or before `at` to expired; returns them. */
  expireDue(at: Date, limit: number): Promise<PaymentIntentRecord[]>;
}
