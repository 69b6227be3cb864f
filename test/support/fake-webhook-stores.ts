import { create, toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentListItemSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import type { EventRecord, EventType } from "../../src/domain/event.js";
import { createRestEncoders } from "../../src/protocols/rest/encode-json.js";
import { createEventNotifier, type EventNotifier } from "../../src/service/event-notifier.js";
import { timestamp } from "../../src/service/payment-intent-presenter.js";
import type { EventStore } from "../../src/store/event-store.js";
import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhookEndpointStore } from "../../src/store/webhook-endpoint-store.js";

/** FakeWebhookStores: small in-test stores behind the event and endpoint ports, with a way to record events. */
export interface FakeWebhookStores {
  events: EventStore;
  endpoints: WebhookEndpointStore;
  notifier: Pick<EventNotifier, "subscribe">;
  /** Records an event as the outbox would, and notifies streams. */
  record(merchantId: string, type: EventType, paymentIntentId: string, at?: Date): EventRecord;
  /** Adds a delivery to an endpoint (what the outbox and the engine would have written). */
  addDelivery(merchantId: string, delivery: WebhookDeliveryRecord): void;
  disable(merchantId: string, endpointId: string): void;
}

const encode = createRestEncoders().encoderFor(EventSchema);

export function createFakeWebhookStores(options: { notifier?: Pick<EventNotifier, "notify"> } = {}): FakeWebhookStores {
  let counter = 0;
  const log: (EventRecord & { seq: number })[] = [];
  const endpoints = new Map<string, WebhookEndpointRecord & { secret: string }>();
  const deliveries: (WebhookDeliveryRecord & { merchantId: string })[] = [];
  const notifier = createEventNotifier();
  const byCreated = <T extends { createdAt: Date; id: string }>(a: T, b: T) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1);
  const afterCursor = (after: { createdAt: Date; id: string } | undefined) => (row: { createdAt: Date; id: string }) =>
    !after || row.createdAt.getTime() < after.createdAt.getTime() || (row.createdAt.getTime() === after.createdAt.getTime() && row.id < after.id);
  const ownEndpoint = (merchantId: string, id: string) => {
    const found = endpoints.get(id);
    return found && found.merchantId === merchantId ? found : undefined;
  };
  const publicEndpoint = ({ secret: _, ...endpoint }: WebhookEndpointRecord & { secret: string }): WebhookEndpointRecord => ({ ...endpoint });

  const events: EventStore = {
    async list(query) {
      return log
        .filter((e) => e.merchantId === query.merchantId && (!query.type || e.type === query.type) && (!query.paymentIntentId || e.paymentIntentId === query.paymentIntentId))
        .sort(byCreated)
        .filter(afterCursor(query.after))
        .slice(0, query.limit);
    },
    async findById(merchantId, id) {
      return log.find((e) => e.merchantId === merchantId && e.id === id);
    },
    async readAfter(merchantId, cursor, limit, types) {
      const scanned = log.filter((e) => e.merchantId === merchantId && e.seq > Number(cursor)).slice(0, limit);
      const last = scanned[scanned.length - 1];
      return {
        events: scanned.filter((e) => !types || types.length === 0 || types.includes(e.type)),
        cursor: last ? String(last.seq) : cursor,
      };
    },
    async cursorAfter(merchantId, eventId) {
      const found = log.find((e) => e.merchantId === merchantId && e.id === eventId);
      return found && String(found.seq);
    },
    async headCursor() {
      return String(counter);
    },
    async deleteRecordedBefore(before, limit) {
      const doomed = log.filter((e) => e.createdAt.getTime() < before.getTime()).slice(0, limit);
      for (const event of doomed) log.splice(log.indexOf(event), 1);
      return doomed.length;
    },
  };

  const store: WebhookEndpointStore = {
    async create(endpoint, max) {
      if ([...endpoints.values()].filter((e) => e.merchantId === endpoint.merchantId).length >= max) return { created: false, reason: "limit" };
      const record = { ...endpoint, status: "enabled" as const, disabledReason: null, updatedAt: endpoint.createdAt, eventTypes: [...endpoint.eventTypes] };
      endpoints.set(endpoint.id, record);
      return { created: true, endpoint: publicEndpoint(record) };
    },
    async list(merchantId) {
      return [...endpoints.values()].filter((e) => e.merchantId === merchantId).map(publicEndpoint);
    },
    async findById(merchantId, id) {
      const found = ownEndpoint(merchantId, id);
      return found && publicEndpoint(found);
    },
    async delete(merchantId, id, at) {
      if (!ownEndpoint(merchantId, id)) return false;
      endpoints.delete(id);
      for (const d of deliveries) if (d.endpointId === id && d.status === "pending") Object.assign(d, { status: "failed", nextAttemptAt: null, updatedAt: at });
      return true;
    },
    async rotateSecret(merchantId, id, secret, at) {
      const found = ownEndpoint(merchantId, id);
      if (!found) return undefined;
      Object.assign(found, { secret, updatedAt: at });
      return publicEndpoint(found);
    },
    async listDeliveries(query) {
      if (!ownEndpoint(query.merchantId, query.endpointId)) return undefined;
      return deliveries
        .filter((d) => d.endpointId === query.endpointId && (!query.status || d.status === query.status))
        .sort(byCreated)
        .filter(afterCursor(query.after))
        .slice(0, query.limit)
        .map(({ merchantId: _, ...d }) => d);
    },
    async redeliver(request) {
      const event = log.find((e) => e.merchantId === request.merchantId && e.id === request.eventId);
      if (!event) return { kind: "no-event" };
      let targets: WebhookEndpointRecord[];
      if (request.endpointId !== undefined) {
        const endpoint = ownEndpoint(request.merchantId, request.endpointId);
        if (!endpoint) return { kind: "no-endpoint" };
        if (endpoint.status !== "enabled") return { kind: "endpoint-disabled" };
        targets = [endpoint];
      } else {
        targets = [...endpoints.values()].filter(
          (e) => e.merchantId === request.merchantId && e.status === "enabled" && (e.eventTypes.length === 0 || e.eventTypes.includes(event.type)),
        );
      }
      const made = targets.map((endpoint) => ({
        id: request.deliveryId(),
        merchantId: request.merchantId,
        eventId: event.id,
        eventType: event.type,
        endpointId: endpoint.id,
        status: "pending" as const,
        attempts: [],
        nextAttemptAt: request.at,
        createdAt: request.at,
        updatedAt: request.at,
      }));
      deliveries.push(...made);
      return { kind: "queued", deliveries: made.map(({ merchantId: _, ...d }) => d) };
    },
  };

  return {
    events,
    endpoints: store,
    notifier,
    record(merchantId, type, paymentIntentId, at = new Date()) {
      counter += 1;
      const id = `evt_00000000-0000-7000-8000-${String(counter).padStart(12, "0")}`;
      const message = create(EventSchema, {
        id,
        type,
        timestamp: timestamp(at),
        data: create(PaymentIntentListItemSchema, {
          id: paymentIntentId,
          amount: 50000n,
          totalAmount: 50000n,
          currency: "NGN",
          customerEmail: "ada@example.com",
          receiptEmail: "ada@example.com",
          country: "NG",
          status: "pending",
          checkoutLink: "https://pay.example.com/checkout/Xq3v9yR2mT8kLp4wZ7nB1cD5fG6hJ0aE2sU4iO8eQ1w",
          paymentMethods: [{ id: "pm_card", type: "card", attributes: [{ name: "Visa" }] }],
          clientReference: `order-${counter}`,
          createdAt: timestamp(at),
          updatedAt: timestamp(at),
          amountRefunded: 0n,
        }),
      });
      const record = { id, merchantId, type, paymentIntentId, createdAt: at, payload: toBinary(EventSchema, message), body: encode(message), seq: counter };
      log.push(record);
      const { seq: _, ...event } = record;
      (options.notifier ?? notifier).notify([event]);
      return event;
    },
    addDelivery(merchantId, delivery) {
      deliveries.push({ ...delivery, merchantId });
    },
    disable(merchantId, endpointId) {
      const found = ownEndpoint(merchantId, endpointId);
      if (found) Object.assign(found, { status: "disabled", disabledReason: "gone" });
    },
  };
}
