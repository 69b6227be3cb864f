import type { EventRecord } from "../../domain/event.js";
import type { EventStore, StreamCursor } from "../event-store.js";
import { firstNotBefore } from "./creation-order.js";
import type { MemoryDeliveryQueue } from "./memory-delivery-queue.js";
import { copyEvent, type MemoryEventTable, type SequencedEvent } from "./memory-event-table.js";

/**
 * A memory stream cursor is the merchant's event sequence number in decimal:
 * "0" before the first event. Events are recorded synchronously, so commit
 * order is recording order and nothing can appear behind a cursor.
 */
function sequenceOf(cursor: StreamCursor): number {
  if (!/^\d{1,15}$/.test(cursor)) throw new RangeError("not a stream cursor of the memory event store");
  return Number(cursor);
}

const eventKey = (event: EventRecord) => event;

/** firstAfter is the index of the first entry whose sequence is above `sequence` (entries ascend, with gaps). */
function firstAfter(entries: readonly SequencedEvent[], sequence: number): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid]!.sequence <= sequence) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** createMemoryEventStore reads the memory events table (the EventStore port, store/event-store.ts). */
export function createMemoryEventStore(table: MemoryEventTable, queue: Pick<MemoryDeliveryQueue, "forgetEnded">): EventStore {
  return {
    async list(query) {
      const source = query.paymentIntentId === undefined ? table.inCreationOrder(query.merchantId) : table.ofIntent(query.merchantId, query.paymentIntentId);
      const start = query.after ? firstNotBefore(source, eventKey, query.after) : source.length;
      const page: EventRecord[] = [];
      for (let i = start - 1; i >= 0 && page.length < query.limit; i--) {
        const event = source[i]!;
        if (event.livemode === query.livemode && (query.type === undefined || event.type === query.type)) page.push(copyEvent(event));
      }
      return page;
    },

    async findById(merchantId, id) {
      const entry = table.find(merchantId, id);
      return entry && copyEvent(entry.event);
    },

    async readAfter(merchantId, cursor, limit, types = []) {
      const events = table.inCommitOrder(merchantId);
      const after = sequenceOf(cursor);
      let position = after;
      const read: EventRecord[] = [];
      for (let i = firstAfter(events, after); i < events.length && read.length < limit; i++) {
        const { sequence, event } = events[i]!;
        position = sequence;
        if (types.length === 0 || types.includes(event.type)) read.push(copyEvent(event));
      }
      return { events: read, cursor: position === after ? cursor : String(position) };
    },

    async cursorAfter(merchantId, eventId) {
      const entry = table.find(merchantId, eventId);
      return entry && String(entry.sequence);
    },

    async headCursor(merchantId) {
      return String(table.lastSequence(merchantId));
    },

    async deleteRecordedBefore(before, limit) {
      const old = table.recordedBefore(before, limit);
      const deletable = queue.forgetEnded(new Set(old.map((event) => event.id)));
      table.remove(deletable);
      return deletable.size;
    },
  };
}
