import { randomUUID } from "node:crypto";
import type { EventRecord } from "../../domain/event.js";
import { isOpenAttempt, type PaymentAttemptRecord } from "../../domain/payment-attempt.js";
import type { MetaEntry } from "../../domain/meta.js";
import type { PaymentIntentRecord, PaymentIntentStatus } from "../../domain/payment-intent.js";
import type { SettlementAccountRecord } from "../../domain/settlement-account.js";
import { createMemoryDeliveryQueue } from "./memory-delivery-queue.js";
import type { EventOutbox } from "../event-store.js";
import { decideSettlement } from "../attempt-settlement.js";
import type { AttemptSettled, InsertResult, IntentWithAccount, ListQuery, PaymentIntentStore, StatusChange } from "../payment-intent-store.js";
import { attemptTexts, checkStorableText, intentTexts, isStorableText } from "../storable-text.js";
import { compareCreation, firstNotBefore, insertInCreationOrder } from "./creation-order.js";
import { createDeadlineHeap } from "./deadline-heap.js";
import { copyAccount, createMemoryAccountTable, type MemoryAccountTable } from "./memory-account-table.js";
import { createMemoryEndpointTable } from "./memory-endpoint-table.js";
import { createMemoryEventRecorder, type MemoryEventRecorder, type MemoryWebhookTables } from "./memory-event-recorder.js";
import { createMemoryEventTable } from "./memory-event-table.js";

export interface MemoryPaymentIntentStoreOptions {
  /**
   * The settlement accounts list items show (createMemoryStores shares them
   * with the account store). Without it the store sees no accounts, and every
   * item's account is null.
   */
  accounts?: MemoryAccountTable;
  /**
   * Records an event for every change that makes one (store/event-store.ts),
   * with its deliveries, into webhooks. Without it no event is recorded.
   */
  outbox?: EventOutbox;
  /** Where events and deliveries go (createMemoryStores shares them with the event and endpoint stores); default: fresh tables. */
  webhooks?: MemoryWebhookTables;
  /** Milliseconds on a clock that only moves forward; attempt leases run on it (default performance.now). */
  leaseClock?: () => number;
}

/** What an open attempt carries besides its record: the reconciler's due time and lease, and whether its alarm was raised. */
interface OpenAttempt {
  checkAfter: number;
  lease?: { token: string; until: number };
  alarmed: boolean;
}

/**
 * MemoryIntentAccess is how another memory store of the same state writes
 * an intent (the refund store: amountRefunded): on the intent's own queue,
 * one write at a time, as the row lock makes it in PostgreSQL.
 */
export interface MemoryIntentAccess {
  /** Runs work on the queue of the merchant's intent with a copy of its record; undefined: no such intent of the merchant. */
  serialized<T>(merchantId: string, id: string, work: (record: PaymentIntentRecord | undefined) => Promise<T> | T): Promise<T>;
  /** Replaces the stored record of an intent (inside serialized) and returns it as events show it, with its list-item account. */
  replace(record: PaymentIntentRecord): IntentWithAccount;
}

/** The memory intent store, with the access the refund store of the same state writes through. */
export interface MemoryPaymentIntentStore extends PaymentIntentStore {
  readonly access: MemoryIntentAccess;
}

/** One stored intent. A write replaces its record; the indexes hold the slot, so they never go stale. */
interface Slot {
  record: PaymentIntentRecord;
}

const keyOf = (slot: Slot) => slot.record;

/**
 * createMemoryPaymentIntentStore keeps intents in process memory, behaving as
 * the PostgreSQL store does. Records are copied in and out so a caller can
 * never change stored state by mutating what it holds.
 *
 * Each merchant's intents are kept in creation order (createdAt, then id), so
 * a page is a binary search for the cursor and a walk newest first that
 * copies only what it returns; a clientReference filter is one lookup in the
 * reference index; a meta filter walks the intents of its rarest entry
 * (an index kept at insert, as meta never changes); the expiry sweep reads
 * a heap of deadlines.
 */
export function createMemoryPaymentIntentStore(options: MemoryPaymentIntentStoreOptions = {}): MemoryPaymentIntentStore {
  const accounts = options.accounts ?? createMemoryAccountTable();
  const recorder: MemoryEventRecorder | undefined =
    options.outbox &&
    createMemoryEventRecorder(
      options.outbox,
      options.webhooks ?? { events: createMemoryEventTable(), endpoints: createMemoryEndpointTable(), queue: createMemoryDeliveryQueue() },
    );
  const byId = new Map<string, Slot>();
  const byMerchant = new Map<string, Slot[]>();
  const byReference = new Map<string, Slot>();
  const byCheckoutToken = new Map<string, Slot>();
  /** Each meta entry's intents in creation order, by merchant, name and value (payment_intent_meta_filter_idx in PostgreSQL). */
  const byMeta = new Map<string, Slot[]>();
  const attemptsById = new Map<string, PaymentAttemptRecord[]>();
  /** Attempt id → its intent's id (the primary key and payment_attempts_idempotency_key in PostgreSQL). */
  const attemptIntent = new Map<string, string>();
  const attemptByKey = new Map<string, string>();
  const open = new Map<string, OpenAttempt>();
  const leaseClock = options.leaseClock ?? (() => performance.now());
  /** Live pending intents by expiresAt; entries that were paid, cancelled or expired meanwhile are skipped. */
  const deadlines = createDeadlineHeap<Slot>();
  // One queue per intent: every status write on it (attempts, cancel,
  // transitions) runs one after another, as row locks make them do in
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
  // A clientReference is unique within a merchant's mode: test and live never collide.
  const referenceKey = (merchantId: string, livemode: boolean, clientReference: string) => `${merchantId}\u0000${livemode}\u0000${clientReference}`;
  // Meta entries are indexed per merchant, both modes together: the list keeps its own mode's.
  const metaKey = (merchantId: string, entry: MetaEntry) => `${merchantId}\u0000${entry.name}\u0000${entry.value}`;

  function ownSlot(merchantId: string, id: string): Slot | undefined {
    const slot = byId.get(id);
    return slot && slot.record.merchantId === merchantId ? slot : undefined;
  }

  /** The stored attempt of the merchant and its intent's id. */
  function ownAttempt(merchantId: string, attemptId: string): { attempt: PaymentAttemptRecord; intentId: string } | undefined {
    const intentId = attemptIntent.get(attemptId);
    const attempt = intentId === undefined ? undefined : attemptsById.get(intentId)?.find((a) => a.id === attemptId);
    return attempt && attempt.merchantId === merchantId ? { attempt, intentId: intentId! } : undefined;
  }

  /** Replaces a stored attempt's record. */
  function replaceAttempt(next: PaymentAttemptRecord): void {
    const list = attemptsById.get(next.paymentIntentId)!;
    list[list.findIndex((a) => a.id === next.id)] = copyAttempt(next);
  }

  /** Adds an attempt, as the insert and its unique keys do in PostgreSQL. */
  function addAttempt(attempt: PaymentAttemptRecord): void {
    checkStorableText(attemptTexts(attempt));
    const key = `${attempt.processor}\u0000${attempt.idempotencyKey}`;
    if (attemptIntent.has(attempt.id) || attemptByKey.has(key)) throw new Error(`payment attempt ${attempt.id} already exists`);
    attemptIntent.set(attempt.id, attempt.paymentIntentId);
    attemptByKey.set(key, attempt.id);
    attemptsById.set(attempt.paymentIntentId, [...(attemptsById.get(attempt.paymentIntentId) ?? []), copyAttempt(attempt)]);
  }

  /** Applies a status change to a live intent that is still change.from. */
  function applyChange(merchantId: string, id: string, change: StatusChange): PaymentIntentRecord | undefined {
    const slot = ownSlot(merchantId, id);
    const found = slot?.record;
    if (!slot || !found || found.deletedAt !== null || found.status !== change.from) return undefined;
    slot.record = copy({ ...found, status: change.to, updatedAt: change.at, transaction: change.transaction ?? found.transaction });
    return copy(slot.record);
  }

  /** The account a list item shows (§2.4), as the PostgreSQL list query joins it. */
  function accountOf(record: PaymentIntentRecord): SettlementAccountRecord | null {
    const first = record.splits[0];
    const account = first ? accounts.find(record.merchantId, first.settlementAccountId) : accounts.ofMerchant(record.merchantId, record.livemode)[0];
    return account ? copyAccount(account) : null;
  }

  const withAccount = (record: PaymentIntentRecord): IntentWithAccount => ({ intent: copy(record), account: accountOf(record) });

  /**
   * Records the event of a change just written to slot, in the same
   * synchronous step (memory's transaction), and tells the outbox at once.
   */
  function recordChange(slot: Slot, from: PaymentIntentStatus | null, at: Date, declinedAttempt = false): void {
    const event = recorder?.record({ from, to: slot.record.status, declinedAttempt }, withAccount(slot.record), at);
    if (event) recorder!.committed([event]);
  }

  return {
    access: {
      serialized: (merchantId, id, work) => serialized(id, async () => work(ownSlot(merchantId, id) && copy(ownSlot(merchantId, id)!.record))),
      replace(record) {
        const slot = ownSlot(record.merchantId, record.id);
        if (!slot) throw new Error(`no payment intent ${record.id} to replace`);
        slot.record = copy(record);
        return withAccount(slot.record);
      },
    },

    async insert(record): Promise<InsertResult> {
      checkStorableText(intentTexts(record));
      const key = referenceKey(record.merchantId, record.livemode, record.clientReference);
      const existing = byReference.get(key);
      if (existing) return { inserted: false, existing: copy(existing.record) };
      // As the primary key and unique constraints do in PostgreSQL: an id
      // and a checkout token are never reused.
      if (byId.has(record.id)) throw new Error(`payment intent id ${record.id} already exists`);
      if (byCheckoutToken.has(record.checkoutToken)) throw new Error("checkout token already exists");
      // Check and write happen in one synchronous step, so concurrent inserts
      // of one reference cannot both succeed.
      const slot: Slot = { record: copy(record) };
      byId.set(record.id, slot);
      byReference.set(key, slot);
      byCheckoutToken.set(record.checkoutToken, slot);
      let ofMerchant = byMerchant.get(record.merchantId);
      if (!ofMerchant) byMerchant.set(record.merchantId, (ofMerchant = []));
      insertInCreationOrder(ofMerchant, slot, keyOf);
      for (const entry of record.meta) {
        const key = metaKey(record.merchantId, entry);
        let slots = byMeta.get(key);
        if (!slots) byMeta.set(key, (slots = []));
        insertInCreationOrder(slots, slot, keyOf);
      }
      if (record.status === "pending" && record.deletedAt === null) deadlines.push(record.expiresAt.getTime(), slot);
      recordChange(slot, null, record.createdAt);
      return { inserted: true, record: copy(record) };
    },

    async findById(merchantId, id) {
      const slot = ownSlot(merchantId, id);
      return slot && copy(slot.record);
    },

    async findWithAccount(merchantId, id) {
      const slot = ownSlot(merchantId, id);
      return slot && withAccount(slot.record);
    },

    async list(query: ListQuery) {
      // As in PostgreSQL, where such a string cannot even be compared: no row can match it.
      const metaTexts = (query.meta ?? []).flatMap((e) => [e.name, e.value]);
      if (![query.clientReference ?? "", query.after?.id ?? "", ...metaTexts].every(isStorableText)) return [];
      const now = query.now.getTime();
      const meta = query.meta ?? [];
      const shown = (record: PaymentIntentRecord) =>
        record.livemode === query.livemode &&
        record.deletedAt === null &&
        hasListedStatus(record, query.status, now) &&
        meta.every((want) => record.meta.some((e) => e.name === want.name && e.value === want.value));
      if (query.clientReference !== undefined) {
        const slot = byReference.get(referenceKey(query.merchantId, query.livemode, query.clientReference));
        if (!slot || !shown(slot.record) || query.limit < 1) return [];
        if (query.after && compareCreation(slot.record, query.after) >= 0) return [];
        return [withAccount(slot.record)];
      }
      // With meta filters, the walk is over the rarest filter's intents alone.
      const slots =
        meta.length === 0
          ? byMerchant.get(query.merchantId)
          : meta.map((entry) => byMeta.get(metaKey(query.merchantId, entry)) ?? []).reduce((a, b) => (b.length < a.length ? b : a));
      if (!slots) return [];
      const page: IntentWithAccount[] = [];
      const start = query.after ? firstNotBefore(slots, keyOf, query.after) : slots.length;
      for (let i = start - 1; i >= 0 && page.length < query.limit; i--) {
        const record = slots[i]!.record;
        if (shown(record)) page.push(withAccount(record));
      }
      return page;
    },

    cancel: (merchantId, id, at) =>
      serialized(id, async () => {
        const slot = ownSlot(merchantId, id);
        const found = slot?.record;
        if (!slot || !found || found.deletedAt !== null || found.status !== "pending") return undefined;
        slot.record = copy({ ...found, status: "cancelled", updatedAt: at, deletedAt: at });
        recordChange(slot, found.status, at);
        return copy(slot.record);
      }),

    async findByCheckoutToken(token) {
      const slot = byCheckoutToken.get(token);
      return slot && copy(slot.record);
    },

    transition: (merchantId, id, change) =>
      serialized(id, async () => {
        checkStorableText([change.transaction]);
        const changed = applyChange(merchantId, id, change);
        if (changed) recordChange(byId.get(id)!, change.from, change.at);
        return changed;
      }),

    async listAttempts(merchantId, id) {
      if (!ownSlot(merchantId, id)) return [];
      return (attemptsById.get(id) ?? []).map(copyAttempt);
    },

    beginAttempt(attempt, checkAfter) {
      return serialized(attempt.paymentIntentId, async () => {
        const slot = ownSlot(attempt.merchantId, attempt.paymentIntentId);
        if (!slot) return undefined;
        const found = slot.record;
        if (found.deletedAt !== null || found.status !== "pending" || found.expiresAt.getTime() <= attempt.createdAt.getTime()) {
          return { begun: false as const, intent: copy(found) };
        }
        // Checked and written in one synchronous step, as one transaction.
        addAttempt(attempt);
        open.set(attempt.id, { checkAfter: checkAfter.getTime(), alarmed: false });
        slot.record = copy({ ...found, status: "processing", updatedAt: attempt.createdAt });
        recordChange(slot, found.status, attempt.createdAt);
        return { begun: true as const, intent: copy(slot.record), attempt: copyAttempt(attempt) };
      });
    },

    async settleAttempt(merchantId, attemptId, settlement, options) {
      const owned = ownAttempt(merchantId, attemptId);
      if (!owned) return undefined;
      checkStorableText([
        settlement.processorReference,
        settlement.outcome === "declined" ? settlement.declineReason : null,
        settlement.outcome === "requires_action" ? settlement.url : null,
      ]);
      return serialized(owned.intentId, async (): Promise<AttemptSettled> => {
        const slot = byId.get(owned.intentId)!;
        const attempts = attemptsById.get(owned.intentId)!;
        const attempt = attempts.find((a) => a.id === attemptId)!;
        const state = open.get(attemptId);
        const unchanged = { intent: copy(slot.record), attempt: copyAttempt(attempt), changed: false };
        if (options.leaseToken !== undefined && state?.lease?.token !== options.leaseToken) return unchanged;
        const declinedBefore = attempts.filter((a) => a.outcome === "declined" && a.id !== attemptId).length;
        const change = decideSettlement(slot.record, attempt, declinedBefore, settlement, options);
        if (!change) return unchanged;
        replaceAttempt(change.attempt);
        if (isOpenAttempt(change.attempt.outcome)) open.set(attemptId, { checkAfter: (options.checkAfter ?? options.at).getTime(), alarmed: state?.alarmed ?? false });
        else open.delete(attemptId);
        if (change.intentChanged) {
          slot.record = copy(change.intent);
          if (change.intent.status === "pending") deadlines.push(change.intent.expiresAt.getTime(), slot);
        }
        if (change.intentChanged || change.declinedAttempt) recordChange(slot, change.from, options.at, change.declinedAttempt);
        return { intent: copy(slot.record), attempt: copyAttempt(change.attempt), changed: true, ...(change.lateSuccess && { lateSuccess: change.lateSuccess }) };
      });
    },

    async postponeAttempt(merchantId, attemptId, postponement) {
      checkStorableText([postponement.processorReference]);
      const owned = ownAttempt(merchantId, attemptId);
      const state = open.get(attemptId);
      if (!owned || !state || (postponement.leaseToken !== undefined && state.lease?.token !== postponement.leaseToken)) return false;
      state.checkAfter = postponement.checkAfter.getTime();
      if (postponement.leaseToken !== undefined) state.lease = undefined;
      if (postponement.processorReference !== null) replaceAttempt({ ...owned.attempt, processorReference: postponement.processorReference });
      return true;
    },

    async claimDueAttempts(now, limit, leaseMs) {
      const clock = leaseClock();
      const due = [...open]
        .filter(([, state]) => state.checkAfter <= now.getTime() && !(state.lease && state.lease.until > clock))
        .sort(([, x], [, y]) => x.checkAfter - y.checkAfter)
        .slice(0, Math.max(0, limit));
      return due.map(([attemptId, state]) => {
        state.lease = { token: randomUUID(), until: clock + leaseMs };
        const intentId = attemptIntent.get(attemptId)!;
        return { attempt: copyAttempt(attemptsById.get(intentId)!.find((a) => a.id === attemptId)!), leaseToken: state.lease.token };
      });
    },

    async alarmOpenAttempts(olderThan, limit) {
      const alarmed: PaymentAttemptRecord[] = [];
      for (const [attemptId, state] of open) {
        if (alarmed.length >= limit) break;
        const attempt = attemptsById.get(attemptIntent.get(attemptId)!)!.find((a) => a.id === attemptId)!;
        if (state.alarmed || attempt.createdAt.getTime() >= olderThan.getTime()) continue;
        state.alarmed = true;
        alarmed.push(copyAttempt(attempt));
      }
      return alarmed;
    },

    async findAttempt(merchantId, attemptId) {
      const owned = ownAttempt(merchantId, attemptId);
      return owned && copyAttempt(owned.attempt);
    },

    async findAttemptForProcessor(processor, idempotencyKey) {
      const attemptId = attemptByKey.get(`${processor}\u0000${idempotencyKey}`);
      const intentId = attemptId === undefined ? undefined : attemptIntent.get(attemptId);
      const attempt = intentId === undefined ? undefined : attemptsById.get(intentId)?.find((a) => a.id === attemptId);
      return attempt && copyAttempt(attempt);
    },

    async expireDue(at, limit) {
      const expired: PaymentIntentRecord[] = [];
      const events: EventRecord[] = [];
      const busy: { at: number; item: Slot }[] = [];
      while (expired.length < limit && (deadlines.peekTime() ?? Infinity) <= at.getTime()) {
        const due = deadlines.pop()!;
        const record = due.item.record;
        if (record.status !== "pending" || record.deletedAt !== null) continue;
        // As SKIP LOCKED does in PostgreSQL: an intent being paid (or
        // otherwise written) right now is left for the next sweep.
        if (queues.has(record.id)) {
          busy.push(due);
          continue;
        }
        expired.push(applyChange(record.merchantId, record.id, { from: "pending", to: "expired", at })!);
        const event = recorder?.record({ from: "pending", to: "expired", declinedAttempt: false }, withAccount(due.item.record), at);
        if (event) events.push(event);
      }
      for (const entry of busy) deadlines.push(entry.at, entry.item);
      recorder?.committed(events);
      return expired;
    },
  };
}

/**
 * hasListedStatus applies a list's status filter. A pending intent past its
 * expiresAt is expired to every reader, so "pending" leaves it out and
 * "expired" takes it in.
 */
function hasListedStatus(record: PaymentIntentRecord, status: PaymentIntentStatus | undefined, now: number): boolean {
  if (status === undefined) return true;
  const lapsed = record.status === "pending" && record.expiresAt.getTime() <= now;
  if (status === "pending") return record.status === "pending" && !lapsed;
  if (status === "expired") return record.status === "expired" || lapsed;
  return record.status === status;
}

function copyAttempt(attempt: PaymentAttemptRecord): PaymentAttemptRecord {
  return { ...attempt, createdAt: new Date(attempt.createdAt), settledAt: attempt.settledAt && new Date(attempt.settledAt) };
}

function copy(record: PaymentIntentRecord): PaymentIntentRecord {
  return {
    ...record,
    paymentMethods: [...record.paymentMethods],
    splits: record.splits.map((split) => ({ ...split })),
    meta: record.meta.map((entry) => ({ ...entry })),
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
    expiresAt: new Date(record.expiresAt),
    deletedAt: record.deletedAt && new Date(record.deletedAt),
  };
}
