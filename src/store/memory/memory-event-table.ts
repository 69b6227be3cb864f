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
  /** The merchant's events in commit order (sequence = index + 1). */
  inCommitOrder(merchantId: string): readonly SequencedEvent[];
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
  const intentKey = (merchantId: string, paymentIntentId: string) => `${merchantId}\u0000${paymentIntentId}`;

  function listOf<T>(map: Map<string, T[]>, key: string): T[] {
    let list = map.get(key);
    if (!list) map.set(key, (list = []));
    return list;
  }

  return {
    add(event) {
      if (byId.has(event.id)) throw new Error(`event ${event.id} already exists`);
      const ofMerchant = listOf(committed, event.merchantId);
      const entry: SequencedEvent = { sequence: ofMerchant.length + 1, event };
      ofMerchant.push(entry);
      byId.set(event.id, entry);
      insertInCreationOrder(listOf(created, event.merchantId), event, eventKey);
      insertInCreationOrder(listOf(byIntent, intentKey(event.merchantId, event.paymentIntentId)), event, eventKey);
    },
    find(merchantId, id) {
      const entry = byId.get(id);
      return entry && entry.event.merchantId === merchantId ? entry : undefined;
    },
    inCommitOrder: (merchantId) => committed.get(merchantId) ?? [],
    inCreationOrder: (merchantId) => created.get(merchantId) ?? [],
    ofIntent: (merchantId, paymentIntentId) => byIntent.get(intentKey(merchantId, paymentIntentId)) ?? [],
  };
}

/** copyEvent: a caller can never change a stored event through what it holds. */
export function copyEvent(event: EventRecord): EventRecord {
  return { ...event, createdAt: new Date(event.createdAt), payload: event.payload.slice() };
}
