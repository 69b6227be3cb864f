import { randomUUID } from "node:crypto";
import { refundEventTypeOf, type EventRecord } from "../../domain/event.js";
import { isAutomaticRefund, type RefundRecord, type RefundStatus } from "../../domain/refund.js";
import type { RefundKey, RefundStore } from "../refund-store.js";
import { checkStorableText, isStorableText, refundTexts } from "../storable-text.js";
import { firstNotBefore, insertInCreationOrder } from "./creation-order.js";
import type { MemoryEventRecorder } from "./memory-event-recorder.js";
import type { MemoryIntentAccess } from "./memory-payment-intent-store.js";

export interface MemoryRefundStoreOptions {
  /** The intents of the same state: refunds change their amountRefunded on their queues. */
  intents: MemoryIntentAccess;
  /** Records refund events into the state's event tables; without it none is recorded. */
  recorder?: MemoryEventRecorder;
  /** Milliseconds on a clock that only moves forward; leases run on it (default performance.now). */
  leaseClock?: () => number;
}

/** A stored refund; a write replaces its record, so the indexes holding the slot never go stale. */
interface Slot {
  record: RefundRecord;
  lease?: { token: string; until: number };
}

/**
 * createMemoryRefundStore keeps refunds in process memory, behaving as the
 * PostgreSQL store does (store/refund-store.ts): a reservation and a
 * settlement run on the intent's queue, which stands for its row lock, and
 * each writes the refund, the intent and the event in one synchronous step,
 * which stands for the transaction. Records are copied in and out.
 */
export function createMemoryRefundStore(options: MemoryRefundStoreOptions): RefundStore {
  const { intents, recorder } = options;
  const leaseClock = options.leaseClock ?? (() => performance.now());
  const byId = new Map<string, Slot>();
  const byRefundId = new Map<string, Slot>();
  const byReference = new Map<string, Slot>();
  const automaticByAttempt = new Map<string, Slot>();
  const byIntent = new Map<string, Slot[]>();
  /** What a claim looks through: the pending refunds only. */
  const pending = new Set<Slot>();
  const key = (merchantId: string, value: string) => `${merchantId}\u0000${value}`;
  const keyOf = (slot: Slot) => slot.record;

  const ownSlot = (merchantId: string, id: string) => {
    const slot = byId.get(key(merchantId, id));
    return slot && slot.record.merchantId === merchantId ? slot : undefined;
  };
  const slotOfKey = (merchantId: string, refundKey: RefundKey) =>
    "clientReference" in refundKey
      ? byReference.get(key(merchantId, refundKey.clientReference))
      : automaticByAttempt.get(key(merchantId, refundKey.automaticFor));

  /** Records the event of a refund's status write, with the intent as it is now, and announces it at once. */
  function recordEvent(from: RefundStatus | null, refund: RefundRecord, intent: ReturnType<MemoryIntentAccess["replace"]>, at: Date) {
    const type = refundEventTypeOf({ from, to: refund.status });
    if (!recorder || !type) return;
    const event: EventRecord = recorder.recordType(type, intent, at, copy(refund));
    recorder.committed([event]);
  }

  return {
    reserve(merchantId, paymentIntentId, refundKey, decide) {
      return intents.serialized(merchantId, paymentIntentId, async (intent) => {
        if (!intent) return undefined;
        const existing = slotOfKey(merchantId, refundKey);
        const refund = decide(intent, existing && copy(existing.record));
        if (!refund) {
          if (!existing) throw new Error("a reservation decided nothing, and no refund is stored under its key");
          return { intent, refund: copy(existing.record), reserved: false };
        }
        checkStorableText(refundTexts(refund));
        if (existing) throw new Error(`refund key of ${refund.id} is already taken by ${existing.record.id}`);
        if (refund.merchantId !== merchantId || refund.paymentIntentId !== paymentIntentId || refund.amount < 1n || refund.status !== "pending") {
          throw new Error(`refund ${refund.id} does not fit the reservation`);
        }
        const counts = !isAutomaticRefund(refund);
        const amountRefunded = intent.amountRefunded + (counts ? refund.amount : 0n);
        // The database's check constraint, here: never more than was paid.
        if (amountRefunded > intent.amount) throw new Error(`refund ${refund.id} would refund more than intent ${intent.id} was paid`);
        // As the primary key and the unique index on id do in PostgreSQL.
        if (byRefundId.has(refund.id)) throw new Error(`refund id ${refund.id} already exists`);
        // Checked and written in one synchronous step, as one transaction.
        const slot: Slot = { record: copy(refund) };
        byId.set(key(merchantId, refund.id), slot);
        byRefundId.set(refund.id, slot);
        if (refund.clientReference !== null) byReference.set(key(merchantId, refund.clientReference), slot);
        else automaticByAttempt.set(key(merchantId, refund.attemptId), slot);
        let ofIntent = byIntent.get(key(merchantId, paymentIntentId));
        if (!ofIntent) byIntent.set(key(merchantId, paymentIntentId), (ofIntent = []));
        insertInCreationOrder(ofIntent, slot, keyOf);
        pending.add(slot);
        const after = counts ? { ...intent, amountRefunded, updatedAt: refund.createdAt } : intent;
        const shown = intents.replace(after);
        recordEvent(null, slot.record, shown, refund.createdAt);
        return { intent: shown.intent, refund: copy(slot.record), reserved: true };
      });
    },

    async settle(merchantId, id, settlement) {
      const found = ownSlot(merchantId, id);
      if (!found) return undefined;
      checkStorableText([settlement.processorReference, settlement.failureReason]);
      return intents.serialized(merchantId, found.record.paymentIntentId, async (intent) => {
        const slot = ownSlot(merchantId, id);
        if (!slot || !intent || slot.record.status !== "pending" || !holdsLease(slot, settlement.leaseToken)) return undefined;
        const refund = slot.record;
        slot.record = {
          ...refund,
          status: settlement.status,
          failureReason: settlement.status === "failed" ? (settlement.failureReason ?? "The refund failed.") : null,
          processorReference: settlement.processorReference ?? refund.processorReference,
          updatedAt: settlement.at,
          checkAfter: null,
        };
        slot.lease = undefined;
        pending.delete(slot);
        const releases = settlement.status === "failed" && !isAutomaticRefund(refund);
        const shown = intents.replace(releases ? { ...intent, amountRefunded: intent.amountRefunded - refund.amount, updatedAt: settlement.at } : intent);
        recordEvent("pending", slot.record, shown, settlement.at);
        return { refund: copy(slot.record), intent: shown.intent };
      });
    },

    async postpone(merchantId, id, postponement) {
      checkStorableText([postponement.processorReference]);
      const slot = ownSlot(merchantId, id);
      if (!slot || slot.record.status !== "pending" || !holdsLease(slot, postponement.leaseToken)) return false;
      slot.record = {
        ...slot.record,
        checkAfter: new Date(postponement.checkAfter),
        processorReference: postponement.processorReference ?? slot.record.processorReference,
      };
      if (postponement.leaseToken !== undefined) slot.lease = undefined;
      return true;
    },

    async claimDue(now, limit, leaseMs) {
      const clock = leaseClock();
      const due = [...pending]
        .filter((slot) => slot.record.checkAfter!.getTime() <= now.getTime() && !(slot.lease && slot.lease.until > clock))
        .sort((x, y) => x.record.checkAfter!.getTime() - y.record.checkAfter!.getTime())
        .slice(0, Math.max(0, limit));
      return due.map((slot) => {
        slot.lease = { token: randomUUID(), until: clock + leaseMs };
        return { refund: copy(slot.record), leaseToken: slot.lease.token };
      });
    },

    async findById(merchantId, id) {
      const slot = ownSlot(merchantId, id);
      return slot && copy(slot.record);
    },

    async findForProcessor(id) {
      const slot = byRefundId.get(id);
      return slot && copy(slot.record);
    },

    async listByIntent(query) {
      // As in PostgreSQL, where such a string cannot even be compared: no row can match it.
      if (!isStorableText(query.paymentIntentId) || !isStorableText(query.after?.id ?? "")) return [];
      const slots = byIntent.get(key(query.merchantId, query.paymentIntentId)) ?? [];
      const start = query.after ? firstNotBefore(slots, keyOf, query.after) : slots.length;
      const page: RefundRecord[] = [];
      for (let i = start - 1; i >= 0 && page.length < query.limit; i--) page.push(copy(slots[i]!.record));
      return page;
    },
  };

  /** Without a token: anyone may settle (the request that made it). With one: only while it is the refund's lease. */
  function holdsLease(slot: Slot, token: string | undefined): boolean {
    return token === undefined || slot.lease?.token === token;
  }
}

function copy(record: RefundRecord): RefundRecord {
  return {
    ...record,
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
    checkAfter: record.checkAfter && new Date(record.checkAfter),
    meta: record.meta.map((entry) => ({ ...entry })),
  };
}
