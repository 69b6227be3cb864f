import type { EventRecord } from "../../domain/event.js";
import { insertInCreationOrder } from "./creation-order.js";

/** A recorded event with its place in its merchant's commit order. */
export interface SequencedEvent {
  /** 1, 2, 3, … per merchant, in the order the events were recorded (memory's commit order). */
  sequence: number;
  event: EventRecord;
}

/**
 * MemoryEventTable is memory mode's events table: written by the memory
 * intent store's outbox (in the same synchronous step as the change), read
 * by the memory EventStore and WebhookEndpointStore.
 */
export interface MemoryEventTable {
  /** Appends an event to its merchant's commit order. */
  add(event: EventRecord): void;
  /** The merchant's event by id (stored, not copied: callers copy what they hand out). */
  find(merchantId: string, id: string): SequencedEvent | undefined;
  /** The merchant's stored events in commit order: ascending sequence, with gaps where retention deleted events. */
  inCommitOrder(merchantId: string): readonly SequencedEvent[];
  /** The sequence of the merchant's last recorded event, deleted or not (0 before the first). */
  lastSequence(merchantId: string): number;
  /**
   * Up to limit events of any merchant recorded before `before`, oldest
   * first. Events are appended as they are recorded, so the walk stops at the
   * first one that is not old enough.
   */
  recordedBefore(before: Date, limit: number): EventRecord[];
  /** Deletes events by id (retention). */
  remove(ids: ReadonlySet<string>): void;
  /** The merchant's events, oldest first by (createdAt, id): what a newest-first page walks backwards. */
  inCreationOrder(merchantId: string): readonly EventRecord[];
  /** One intent's events of the merchant, oldest first by (createdAt, id). */
  ofIntent(merchantId: string, paymentIntentId: string): readonly EventRecord[];
}

const eventKey = (event: EventRecord) => event;

/** createMemoryEventTable holds each merchant's events in commit order and in creation order, with an index by intent. */
export function createMemoryEventTable(): MemoryEventTable {
  const committed = new Map<string, SequencedEvent[]>();
  const created = new Map<string, EventRecord[]>();
  const byIntent = new Map<string, EventRecord[]>();
  const byId = new Map<string, SequencedEvent>();
  const last = new Map<string, number>();
  /** Every merchant's events in the order they were recorded: what retention walks. */
  let recorded: EventRecord[] = [];
  const intentKey = (merchantId: string, paymentIntentId: string) => `${merchantId}\u0000${paymentIntentId}`;

  function listOf<T>(map: Map<string, T[]>, key: string): T[] {
    let list = map.get(key);
    if (!list) map.set(key, (list = []));
    return list;
  }

  return {
    add(event) {
      if (byId.has(event.id)) throw new Error(`event ${event.id} already exists`);
      const sequence = (last.get(event.merchantId) ?? 0) + 1;
      last.set(event.merchantId, sequence);
      const entry: SequencedEvent = { sequence, event };
      listOf(committed, event.merchantId).push(entry);
      recorded.push(event);
      byId.set(event.id, entry);
      insertInCreationOrder(listOf(created, event.merchantId), event, eventKey);
      insertInCreationOrder(listOf(byIntent, intentKey(event.merchantId, event.paymentIntentId)), event, eventKey);
    },
    find(merchantId, id) {
      const entry = byId.get(id);
      return entry && entry.event.merchantId === merchantId ? entry : undefined;
    },
    inCommitOrder: (merchantId) => committed.get(merchantId) ?? [],
    lastSequence: (merchantId) => last.get(merchantId) ?? 0,
    recordedBefore(before, limit) {
      const old: EventRecord[] = [];
      for (const event of recorded) {
        if (old.length >= limit || event.createdAt.getTime() >= before.getTime()) break;
        old.push(event);
      }
      return old;
    },
    remove(ids) {
      if (ids.size === 0) return;
      const merchants = new Set<string>();
      for (const id of ids) {
        const entry = byId.get(id);
        if (!entry) continue;
        byId.delete(id);
        merchants.add(entry.event.merchantId);
        const key = intentKey(entry.event.merchantId, entry.event.paymentIntentId);
        byIntent.set(key, byIntent.get(key)!.filter((e) => !ids.has(e.id)));
      }
      for (const merchantId of merchants) {
        committed.set(merchantId, committed.get(merchantId)!.filter((e) => !ids.has(e.event.id)));
        created.set(merchantId, created.get(merchantId)!.filter((e) => !ids.has(e.id)));
      }
      recorded = recorded.filter((e) => !ids.has(e.id));
    },
    inCreationOrder: (merchantId) => created.get(merchantId) ?? [],
    ofIntent: (merchantId, paymentIntentId) => byIntent.get(intentKey(merchantId, paymentIntentId)) ?? [],
  };
}

/** copyEvent: a caller can never change a stored event through what it holds. */
export function copyEvent(event: EventRecord): EventRecord {
  return { ...event, createdAt: new Date(event.createdAt), payload: event.payload.slice() };
}
