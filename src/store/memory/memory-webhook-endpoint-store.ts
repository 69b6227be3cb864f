import type { EventRecord, EventType } from "../../domain/event.js";
import type { MemoryDeliveryQueue, DeliveryRecord } from "./memory-delivery-queue.js";
import { rotateSigningSecrets } from "../../domain/signing-secrets.js";
import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEndpointStore } from "../webhook-endpoint-store.js";
import { compareCreation } from "./creation-order.js";
import { takesEventType, type MemoryEndpointEntry, type MemoryEndpointTable } from "./memory-endpoint-table.js";
import type { MemoryEventTable } from "./memory-event-table.js";

export interface MemoryWebhookEndpointStoreOptions {
  endpoints: MemoryEndpointTable;
  events: MemoryEventTable;
  /** Holds each endpoint's secrets and enabled state, and the deliveries. */
  queue: MemoryDeliveryQueue;
}

/**
 * createMemoryWebhookEndpointStore is the WebhookEndpointStore of memory
 * mode. What the API shows of an endpoint is split between the endpoint
 * table (owner, URL, types, description, times) and the delivery queue
 * (secrets, enabled or disabled, as the delivery engine leaves it), so the
 * engine's disabling of an endpoint shows at once. Every method runs without
 * awaiting in between, which is memory's transaction.
 */
export function createMemoryWebhookEndpointStore(options: MemoryWebhookEndpointStoreOptions): WebhookEndpointStore {
  const { endpoints, events, queue } = options;

  function recordOf(entry: MemoryEndpointEntry): WebhookEndpointRecord {
    const state = queue.endpoint(entry.id)!;
    return {
      id: entry.id,
      merchantId: entry.merchantId,
      livemode: entry.livemode,
      url: entry.url,
      eventTypes: [...entry.eventTypes],
      description: entry.description,
      status: state.status,
      disabledReason: state.status === "disabled" ? state.disabledReason : null,
      createdAt: new Date(entry.createdAt),
      updatedAt: new Date(entry.updatedAt),
    };
  }

  function enqueue(event: EventRecord, endpointId: string, at: Date, deliveryId: () => string): WebhookDeliveryRecord {
    const id = deliveryId();
    queue.enqueue({ id, eventId: event.id, eventType: event.type, endpointId, body: event.body, createdAt: at });
    return deliveryRecordOf(queue.delivery(id)!);
  }

  return {
    async create(endpoint, maxPerMerchant) {
      if (endpoints.ofMerchant(endpoint.merchantId).length >= maxPerMerchant) return { created: false, reason: "limit" };
      const entry: MemoryEndpointEntry = {
        id: endpoint.id,
        merchantId: endpoint.merchantId,
        livemode: endpoint.livemode,
        url: endpoint.url,
        eventTypes: [...endpoint.eventTypes],
        description: endpoint.description,
        createdAt: new Date(endpoint.createdAt),
        updatedAt: new Date(endpoint.createdAt),
      };
      // The table refuses a used id before the queue's state is touched.
      endpoints.add(entry);
      queue.putEndpoint({ id: endpoint.id, merchantId: endpoint.merchantId, url: endpoint.url, secrets: [{ secret: endpoint.secret, expiresAt: null }] });
      return { created: true, endpoint: recordOf(entry) };
    },

    async list(merchantId) {
      return endpoints.ofMerchant(merchantId).map(recordOf);
    },

    async findById(merchantId, id) {
      const entry = endpoints.find(merchantId, id);
      return entry && recordOf(entry);
    },

    async delete(merchantId, id, at) {
      if (!endpoints.remove(merchantId, id)) return false;
      queue.retireEndpoint(id, at);
      return true;
    },

    async rotateSecret(merchantId, id, newSecret, at, graceMs) {
      const entry = endpoints.find(merchantId, id);
      if (!entry) return undefined;
      queue.setSecrets(id, rotateSigningSecrets(queue.endpoint(id)!.secrets, newSecret, at, graceMs));
      entry.updatedAt = new Date(at);
      return recordOf(entry);
    },

    async listDeliveries(query) {
      if (!endpoints.find(query.merchantId, query.endpointId)) return undefined;
      const { after, status } = query;
      return queue
        .deliveriesOf(query.endpointId)
        .filter((d) => (status === undefined || d.status === status) && (after === undefined || compareCreation(d, after) < 0))
        .sort((x, y) => compareCreation(y, x))
        .slice(0, query.limit)
        .map(deliveryRecordOf);
    },

    async redeliver(request) {
      const found = events.find(request.merchantId, request.eventId);
      if (!found) return { kind: "no-event" };
      const event = found.event;
      if (request.endpointId !== undefined) {
        // A named endpoint gets the event even when its filter leaves the type out: the merchant asked for it.
        if (!endpoints.find(request.merchantId, request.endpointId)) return { kind: "no-endpoint" };
        if (queue.endpoint(request.endpointId)!.status !== "enabled") return { kind: "endpoint-disabled" };
        return { kind: "queued", deliveries: [enqueue(event, request.endpointId, request.at, request.deliveryId)] };
      }
      const deliveries = endpoints
        .ofMerchant(request.merchantId)
        .filter((entry) => entry.livemode === event.livemode && takesEventType(entry, event.type) && queue.endpoint(entry.id)!.status === "enabled")
        .map((entry) => enqueue(event, entry.id, request.at, request.deliveryId));
      return { kind: "queued", deliveries };
    },
  };
}

/** deliveryRecordOf shows a delivery without its body or lease. */
function deliveryRecordOf(delivery: DeliveryRecord): WebhookDeliveryRecord {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    // Only the outbox and redeliver enqueue here, always with an EventType.
    eventType: delivery.eventType as EventType,
    endpointId: delivery.endpointId,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt,
    createdAt: delivery.createdAt,
    updatedAt: delivery.updatedAt,
  };
}
