import type { EventRecord } from "../../domain/event.js";
import type { EventStore, StreamCursor } from "../event-store.js";
import { firstNotBefore } from "./creation-order.js";
import { copyEvent, type MemoryEventTable } from "./memory-event-table.js";

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

/** createMemoryEventStore reads the memory events table (the EventStore port, store/event-store.ts). */
export function createMemoryEventStore(table: MemoryEventTable): EventStore {
  return {
    async list(query) {
      const source = query.paymentIntentId === undefined ? table.inCreationOrder(query.merchantId) : table.ofIntent(query.merchantId, query.paymentIntentId);
      const start = query.after ? firstNotBefore(source, eventKey, query.after) : source.length;
      const page: EventRecord[] = [];
      for (let i = start - 1; i >= 0 && page.length < query.limit; i--) {
        const event = source[i]!;
        if (query.type === undefined || event.type === query.type) page.push(copyEvent(event));
      }
      return page;
    },

    async findById(merchantId, id) {
      const entry = table.find(merchantId, id);
      return entry && copyEvent(entry.event);
    },

    async readAfter(merchantId, cursor, limit, types = []) {
      const events = table.inCommitOrder(merchantId);
      let position = sequenceOf(cursor);
      const read: EventRecord[] = [];
      // Sequence n sits at index n - 1, so the first event after the cursor is at index position.
      while (position < events.length && read.length < limit) {
        const { event } = events[position]!;
        position += 1;
        if (types.length === 0 || types.includes(event.type)) read.push(copyEvent(event));
      }
      return { events: read, cursor: position === sequenceOf(cursor) ? cursor : String(position) };
    },

    async cursorAfter(merchantId, eventId) {
      const entry = table.find(merchantId, eventId);
      return entry && String(entry.sequence);
    },

    async headCursor(merchantId) {
      return String(table.inCommitOrder(merchantId).length);
    },
  };
}
