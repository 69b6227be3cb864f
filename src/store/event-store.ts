import type { ApiKeyRecord } from "../domain/api-key.js";
import type { EventRecord, EventType } from "../domain/event.js";
import type { RefundRecord } from "../domain/refund.js";
import type { IntentWithAccount } from "./payment-intent-store.js";

/**
 * RenderedEvent is what the outbox writes for one change, made by the
 * service's renderer (the store never formats an API message itself).
 */
export type RenderedEvent = Pick<EventRecord, "id" | "createdAt" | "payload" | "body">;

/**
 * EventOutbox is how a PaymentIntentStore (and a RefundStore) records events (README, Webhooks):
 * for every change that eventTypeOf (domain/event.ts) says records an event,
 * the store, inside the transaction that writes the change,
 *   1. reads the intent after the change with its list-item account (as
 *      findWithAccount answers) and calls render(type, intent, at),
 *   2. writes the event row (EventRecord: the rendering plus merchantId,
 *      type and paymentIntentId),
 *   3. writes one pending delivery (id from deliveryId(), due at the event's
 *      createdAt) per enabled webhook endpoint of the merchant whose
 *      eventTypes is empty or holds the type,
 * and after the commit calls committed() with the events written. A change
 * that is rolled back (a decide() that throws, a failed statement) leaves no
 * event and no delivery; an idempotent replay records nothing.
 *
 * A store built without an outbox records no events (unit tests of other
 * behaviour).
 */
export interface EventOutbox {
  /**
   * The event's id, time and both renderings. Called inside the transaction;
   * must not throw. refund: the refund a refund.* event reports, right after the change.
   */
  render(type: EventType, change: IntentWithAccount, at: Date, refund?: RefundRecord): RenderedEvent;
  /**
   * The same for an api_key.* event (issue 23, §2), which the key store
   * records with the key's change, in its transaction, with one delivery per
   * enabled endpoint of the key's merchant and mode taking the type. Absent
   * (an outbox of a test of intents alone): no key event is recorded.
   */
  renderKey?(type: EventType, key: ApiKeyRecord, at: Date): RenderedEvent;
  /** A new delivery id ("whd_" + UUIDv7). */
  deliveryId(): string;
  /**
   * Told after the commit (wakes the event streams, and the delivery engine
   * unless deliveries is 0: a commit that wrote no delivery made nothing due).
   * deliveries: at most how many deliveries the commit wrote; unset when not
   * counted. Must not throw.
   */
  committed(events: readonly EventRecord[], deliveries?: number): void;
}

/** Position after which a keyset page of events starts: the last event of the previous page. */
export interface EventListCursor {
  createdAt: Date;
  id: string;
}

/** EventListQuery selects one page of a merchant's events, newest first (createdAt desc, id desc). */
export interface EventListQuery {
  merchantId: string;
  /** Only events of this mode (issue 23, §1). */
  livemode: boolean;
  limit: number;
  after?: EventListCursor;
  type?: EventType;
  paymentIntentId?: string;
}

/**
 * StreamCursor is an opaque position in one merchant's events in the order
 * they became visible (committed), which is the order StreamEvents sends.
 * Memory: a sequence number; PostgreSQL: the writing transaction's id and
 * the row's sequence (see EventStore.readAfter).
 */
export type StreamCursor = string;

/** StreamRead is one batch of events after a cursor and the cursor after the batch. */
export interface StreamRead {
  events: EventRecord[];
  /** Where the next read starts: the last event's position, or the cursor given when none. */
  cursor: StreamCursor;
}

/**
 * EventStore reads recorded events; only the outbox writes them. Every
 * method is scoped to one merchant.
 */
export interface EventStore {
  /** A page of events, newest first. */
  list(query: EventListQuery): Promise<EventRecord[]>;
  /** One event of the merchant. */
  findById(merchantId: string, id: string): Promise<EventRecord | undefined>;
  /**
   * Up to limit events recorded after cursor, in commit order, with no gap:
   * once an event has been read, no event can appear before it. On PostgreSQL a transaction that committed late can hold a smaller
   * sequence number than one already read, so readAfter only returns events
   * of transactions older than every transaction still running in this
   * database (pg_snapshot_xmin, leaving out transactions of other databases
   * on the server, which cannot write here), ordered by (transaction id,
   * sequence): nothing can later appear before the cursor. A long
   * transaction that has written holds the stream back while it runs. Only events of the given types when
   * types is non-empty (the cursor still moves past the others).
   */
  readAfter(merchantId: string, cursor: StreamCursor, limit: number, types?: readonly EventType[]): Promise<StreamRead>;
  /** The position right after the given event (to resume after it); undefined when the merchant has no such event. */
  cursorAfter(merchantId: string, eventId: string): Promise<StreamCursor | undefined>;
  /** The position after every event readable now: a stream "from now on" starts here. */
  headCursor(merchantId: string): Promise<StreamCursor>;
  /**
   * Retention (EVENT_RETENTION_DAYS): deletes up to limit events of any
   * merchant recorded before `before`, oldest first, with their ended
   * deliveries. An event with a pending delivery (a redelivery still being
   * retried) is kept until that delivery ends. Returns how many were deleted.
   * Cursors stay valid: a stream resuming after a deleted event goes on
   * with the next one still stored.
   */
  deleteRecordedBefore(before: Date, limit: number): Promise<number>;
}
