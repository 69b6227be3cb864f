import { eventTypeOf, type EventRecord, type EventType, type IntentChange } from "../../domain/event.js";
import type { ApiKeyRecord } from "../../domain/api-key.js";
import type { RefundRecord } from "../../domain/refund.js";
import type { MemoryDeliveryQueue } from "./memory-delivery-queue.js";
import type { EventOutbox } from "../event-store.js";
import type { IntentWithAccount } from "../payment-intent-store.js";
import { takesEventType, type MemoryEndpointTable } from "./memory-endpoint-table.js";
import { copyEvent, type MemoryEventTable } from "./memory-event-table.js";

/** MemoryWebhookTables is memory mode's event and endpoint state, shared by the stores that read and write it. */
export interface MemoryWebhookTables {
  events: MemoryEventTable;
  endpoints: MemoryEndpointTable;
  queue: MemoryDeliveryQueue;
}

/**
 * MemoryEventRecorder is the memory intent store's side of the EventOutbox
 * port (store/event-store.ts): called in the same synchronous step as the
 * change, which is memory's transaction, so a change that does not happen
 * records nothing and one that does is never without its event.
 */
export interface MemoryEventRecorder {
  /** Records the event the change makes (if eventTypeOf names one) and its deliveries; returns it. */
  record(change: IntentChange, after: IntentWithAccount, at: Date): EventRecord | undefined;
  /** Records an event of the given type (a refund's, with the refund) and its deliveries; returns it. */
  recordType(type: EventType, after: IntentWithAccount, at: Date, refund?: RefundRecord): EventRecord;
  /** Records an api_key.* event and its deliveries (nothing when the outbox renders no key events). */
  recordKey(type: EventType, key: ApiKeyRecord, at: Date): EventRecord | undefined;
  /** After the change: tells the outbox of the events recorded (none: nothing to tell) and of the deliveries they made. */
  committed(events: readonly EventRecord[]): void;
}

/** createMemoryEventRecorder writes events and deliveries through the outbox's rendering into the shared tables. */
export function createMemoryEventRecorder(outbox: EventOutbox, tables: MemoryWebhookTables): MemoryEventRecorder {
  const { events, endpoints, queue } = tables;
  // Deliveries enqueued since the last committed(): a change records and commits in one synchronous step.
  let enqueued = 0;
  /** Adds the event and one delivery per enabled endpoint of its merchant and mode taking its type. */
  function write(event: EventRecord): EventRecord {
    events.add(event);
    for (const endpoint of endpoints.ofMerchant(event.merchantId)) {
      // An endpoint receives only its own mode's events (issue 23, §1).
      if (endpoint.livemode !== event.livemode || !takesEventType(endpoint, event.type) || queue.endpoint(endpoint.id)?.status !== "enabled") continue;
      queue.enqueue({ id: outbox.deliveryId(), eventId: event.id, eventType: event.type, endpointId: endpoint.id, body: event.body, createdAt: event.createdAt });
      enqueued++;
    }
    return event;
  }
  const recorder: MemoryEventRecorder = {
    record(change, after, at) {
      const type = eventTypeOf(change);
      return type === null ? undefined : recorder.recordType(type, after, at);
    },
    recordType(type, after, at, refund) {
      const rendered = outbox.render(type, after, at, refund);
      return write({
        ...rendered,
        merchantId: after.intent.merchantId,
        type,
        paymentIntentId: after.intent.id,
        livemode: after.intent.livemode,
        createdAt: new Date(rendered.createdAt),
      });
    },
    recordKey(type, key, at) {
      const rendered = outbox.renderKey?.(type, key, at);
      if (!rendered) return undefined;
      return write({ ...rendered, merchantId: key.merchantId, type, paymentIntentId: "", livemode: key.mode === "live", createdAt: new Date(rendered.createdAt) });
    },
    committed(recorded) {
      const deliveries = enqueued;
      enqueued = 0;
      if (recorded.length > 0) outbox.committed(recorded.map(copyEvent), deliveries);
    },
  };
  return recorder;
}
