import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { RefundRecord } from "../domain/refund.js";

/**
 * Which stored refund a reservation would repeat: the merchant's refund with
 * this clientReference (any intent of the merchant), or the automatic refund
 * of this attempt (one per attempt).
 */
export type RefundKey = { clientReference: string } | { automaticFor: string };

/**
 * What the service decides under the intent's lock, from the intent as it is
 * and the refund stored under the key (if any): the refund to reserve, or
 * null to write nothing (a replay). Throwing writes nothing.
 */
export type ReserveDecision = (intent: PaymentIntentRecord, existing: RefundRecord | undefined) => RefundRecord | null;

/** The outcome of a reservation: the intent after it, and the refund reserved or repeated. */
export interface Reservation {
  intent: PaymentIntentRecord;
  refund: RefundRecord;
  /** false: decide wrote nothing and refund is the one stored under the key. */
  reserved: boolean;
}

/** The processor's final answer about a pending refund. */
export interface RefundSettlement {
  status: "successful" | "failed";
  at: Date;
  /** The processor's reference for the refund; null keeps the one stored. */
  processorReference: string | null;
  /** Set for failed. */
  failureReason?: string;
  /** A reconciler's claim: settles only while the refund still carries this lease. */
  leaseToken?: string;
}

/** A pending refund the processor still has: when to ask again. */
export interface RefundPostponement {
  checkAfter: Date;
  /** The processor's reference, once given; null keeps the one stored. */
  processorReference: string | null;
  /** A reconciler's claim: applies only while the refund still carries this lease (which it gives back). */
  leaseToken?: string;
}

/** A refund claimed by one reconciler for one check. */
export interface ClaimedRefund {
  refund: RefundRecord;
  leaseToken: string;
}

/** Position after which a keyset page of refunds starts: the last refund of the previous page. */
export interface RefundListCursor {
  createdAt: Date;
  id: string;
}

/** One page of an intent's refunds, newest first (createdAt desc, id desc). */
export interface RefundListQuery {
  merchantId: string;
  paymentIntentId: string;
  limit: number;
  after?: RefundListCursor;
}

/**
 * RefundStore is the port to refunds and to the intent's amountRefunded,
 * which only it changes. Every method is scoped to one merchant (but the
 * reconciler's claim). Both implementations must agree on:
 *
 * 1. Reservation is one short atomic step under the intent's lock (the row
 *    lock in PostgreSQL, the intent's queue in memory): read the intent and
 *    the refund under the key, decide, then insert the pending refund, add
 *    its amount to the intent's amountRefunded (a merchant's refund only:
 *    an automatic one gives back a payment that did not pay the intent) and
 *    record refund.created, together or not at all. amountRefunded never
 *    exceeds amount: an implementation refuses a refund that would (the
 *    service decides first; this is the last line). No processor is called
 *    inside it.
 * 2. (merchantId, clientReference) is unique across every intent of the
 *    merchant, forever; an attempt has at most one automatic refund.
 * 3. Settlement is a compare-and-set: only a pending refund (and, with a
 *    lease token, only while that lease is the refund's) becomes successful
 *    or failed, exactly once; a failed merchant refund gives its amount back
 *    to amountRefunded in the same step; refund.succeeded or refund.failed
 *    is recorded with it.
 * 4. Claims are exclusive and leased like the delivery queue's: a claim
 *    returns pending refunds due (checkAfter <= now) not under another
 *    unexpired lease, each with a fresh token, leases measured on the
 *    implementation's own clock (never `now`, which a test clock moves).
 */
export interface RefundStore {
  /** Reserves a refund of the merchant's intent as decide says (see 1); undefined: no such intent. */
  reserve(merchantId: string, paymentIntentId: string, key: RefundKey, decide: ReserveDecision): Promise<Reservation | undefined>;
  /** Settles a pending refund (see 3); undefined when it was not pending (or the lease is no longer ours). */
  settle(merchantId: string, id: string, settlement: RefundSettlement): Promise<{ refund: RefundRecord; intent: PaymentIntentRecord } | undefined>;
  /** Keeps a refund pending until checkAfter; false when it is no longer pending (or the lease is no longer ours). */
  postpone(merchantId: string, id: string, postponement: RefundPostponement): Promise<boolean>;
  /** Claims up to limit due pending refunds of any merchant for leaseMs (see 4). */
  claimDue(now: Date, limit: number, leaseMs: number): Promise<ClaimedRefund[]>;
  findById(merchantId: string, id: string): Promise<RefundRecord | undefined>;
  /**
   * Finds a refund by id alone, for a processor's webhook notice, which names
   * our refund id (its idempotency key) and no merchant: the one read not
   * scoped to a merchant, as a checkout token's.
   */
  findForProcessor(id: string): Promise<RefundRecord | undefined>;
  /** A page of one intent's refunds, newest first. */
  listByIntent(query: RefundListQuery): Promise<RefundRecord[]>;
}
