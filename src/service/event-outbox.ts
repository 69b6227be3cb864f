import { create, toBinary } from "@bufbuild/protobuf";
import { ApiKeySchema } from "../../gen/payments/v2/api_keys_pb.js";
import { EventSchema, type Event } from "../../gen/payments/v2/events_pb.js";
import type { EventRecord } from "../domain/event.js";
import type { IdGenerator } from "../lib/ids.js";
import type { EventOutbox } from "../store/event-store.js";
import { timestamp, type PaymentIntentPresenter } from "./payment-intent-presenter.js";
import { refundMessage } from "./refund-presenter.js";
import { apiKeyMessage } from "./api-key-presenter.js";

export interface EventOutboxOptions {
  presenter: PaymentIntentPresenter;
  ids: Pick<IdGenerator, "eventId" | "webhookDeliveryId">;
  /** The Event's REST JSON (the transport's encoder, passed down so the service imports no transport). */
  encodeJson: (event: Event) => string;
  /** Told after each commit that recorded events (the delivery engine's wake-up, the event streams), as EventOutbox.committed. */
  onCommitted: (events: readonly EventRecord[], deliveries: number | undefined) => void;
}

/**
 * createEventOutbox is what the stores call to record an event (the
 * EventOutbox port, store/event-store.ts): the event is rendered once, in
 * the change's transaction, as the intent looked right after the change (the
 * GET shape, judged at the change's time; a refund.* event also carries
 * the refund), in binary for the RPC answers and
 * as REST JSON for the webhook body, so every delivery attempt signs the same
 * bytes and GET /v2/events/{id} shows exactly what was sent.
 */
export function createEventOutbox(options: EventOutboxOptions): EventOutbox {
  const { presenter, ids, encodeJson } = options;
  return {
    render(type, change, at, refund) {
      const message: Event = {
        $typeName: "payments.v2.Event",
        id: ids.eventId(change.intent.livemode),
        type,
        timestamp: timestamp(at),
        data: presenter.toListItem(change.intent, change.account, at),
        refund: refund && refundMessage(refund),
        livemode: change.intent.livemode,
      };
      return { id: message.id, createdAt: at, payload: toBinary(EventSchema, message), body: encodeJson(message) };
    },
    renderKey(type, key, at) {
      const livemode = key.mode === "live";
      const message: Event = {
        $typeName: "payments.v2.Event",
        id: ids.eventId(livemode),
        type,
        timestamp: timestamp(at),
        apiKey: create(ApiKeySchema, apiKeyMessage(key)),
        livemode,
      };
      return { id: message.id, createdAt: at, payload: toBinary(EventSchema, message), body: encodeJson(message) };
    },
    deliveryId: () => ids.webhookDeliveryId(),
    committed(events, deliveries) {
      if (events.length > 0) options.onCommitted(events, deliveries);
    },
  };
}
