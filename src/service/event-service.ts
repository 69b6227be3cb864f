import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  EventSchema,
  type Event,
  type ListEventsRequest,
  type ListEventsResponse,
  type RedeliverEventRequest,
  type RedeliverEventResponse,
} from "../../gen/payments/v2/events_pb.js";
import { isEventType, type EventRecord } from "../domain/event.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { EventStore } from "../store/event-store.js";
import type { WebhookEndpointStore } from "../store/webhook-endpoint-store.js";
import { invalid } from "../rules/invalid.js";
import type { PageTokenCodec } from "./page-token.js";
import { inOtherMode, modeName } from "./mode-scope.js";
import { deliveryMessage } from "./webhook-presenter.js";

/** EventService reads a merchant's recorded events and queues them again (README, Webhooks). */
export interface EventService {
  /** One page, newest first; nextPageToken is "" on the last page. */
  list(merchantId: string, request: ListEventsRequest, livemode: boolean): Promise<ListEventsResponse>;
  get(merchantId: string, id: string, livemode: boolean): Promise<Event>;
  /** Queues the event again to endpoints of its mode (a named one of another mode is refused). */
  redeliver(merchantId: string, request: RedeliverEventRequest, livemode: boolean): Promise<RedeliverEventResponse>;
}

export interface EventServiceDeps {
  events: EventStore;
  endpoints: WebhookEndpointStore;
  pageTokens: PageTokenCodec;
  clock: Clock;
  ids: Pick<IdGenerator, "webhookDeliveryId">;
  /** Told after a redelivery was queued, so the delivery engine looks at once instead of at its next poll. */
  onRedelivered?: () => void;
}

/**
 * eventMessage is the event as recorded: its payload was rendered once, when
 * the change happened, so every reader sees what the webhook body carried.
 */
export function eventMessage(record: EventRecord): Event {
  return fromBinary(EventSchema, record.payload);
}

/**
 * createEventService serves recorded events: every read is scoped to the
 * merchant, so another merchant's event is NotFound exactly as an unknown one,
 * and list filters are bound into the page token as for intents.
 */
export function createEventService(deps: EventServiceDeps): EventService {
  const { events, clock } = deps;
  const eventNotFound = (id: string) => new ConnectError(`event ${id} not found`, Code.NotFound);

  return {
    async list(merchantId, request, livemode) {
      // The field rules ran in the pipeline: pageSize is in range (its default filled in), the filters well-formed.
      const pageSize = request.pageSize!;
      const scope = { merchantId, query: ["events", modeName(livemode), request.type, request.paymentIntentId] };
      let after;
      if (request.pageToken !== "") {
        after = deps.pageTokens.decode(request.pageToken, scope);
        if (!after) throw invalid("pageToken is not valid for this query");
      }
      const rows = await events.list({
        merchantId,
        livemode,
        limit: pageSize + 1,
        after,
        type: isEventType(request.type) ? request.type : undefined,
        paymentIntentId: request.paymentIntentId || undefined,
      });
      const page = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
      const last = page[page.length - 1];
      return {
        $typeName: "payments.v2.ListEventsResponse",
        events: page.map(eventMessage),
        nextPageToken: rows.length > pageSize && last ? deps.pageTokens.encode(last, scope) : "",
      };
    },

    async get(merchantId, id, livemode) {
      const record = await events.findById(merchantId, id);
      if (!record) throw eventNotFound(id);
      if (record.livemode !== livemode) throw inOtherMode("event", id, livemode);
      return eventMessage(record);
    },

    async redeliver(merchantId, request, livemode) {
      const endpointId = request.webhookEndpointId === "" ? undefined : request.webhookEndpointId;
      const event = await events.findById(merchantId, request.id);
      if (!event) throw eventNotFound(request.id);
      if (event.livemode !== livemode) throw inOtherMode("event", request.id, livemode);
      if (endpointId !== undefined) {
        const endpoint = await deps.endpoints.findById(merchantId, endpointId);
        if (endpoint && endpoint.livemode !== livemode) throw inOtherMode("webhook endpoint", endpointId, livemode);
      }
      const result = await deps.endpoints.redeliver({
        merchantId,
        eventId: request.id,
        endpointId,
        at: clock.now(),
        deliveryId: () => deps.ids.webhookDeliveryId(),
      });
      switch (result.kind) {
        case "no-event":
          throw eventNotFound(request.id);
        case "no-endpoint":
          throw new ConnectError(`webhook endpoint ${endpointId} not found`, Code.NotFound);
        case "endpoint-disabled":
          throw new ConnectError(`webhook endpoint ${endpointId} is disabled and takes no deliveries`, Code.FailedPrecondition);
        case "queued":
          if (result.deliveries.length > 0) deps.onRedelivered?.();
          return { $typeName: "payments.v2.RedeliverEventResponse", deliveries: result.deliveries.map(deliveryMessage) };
      }
    },
  };
}
