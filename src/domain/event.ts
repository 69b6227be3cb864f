import type { PaymentIntentStatus } from "./payment-intent.js";
import type { RefundStatus } from "./refund.js";

/**
 * The event types, in the order README's Webhooks section lists them. A
 * webhook endpoint takes all of them (no filter) or a subset.
 */
export const eventTypes = [
  "payment_intent.created",
  "payment_intent.processing",
  "payment_intent.requires_action",
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "payment_intent.failed",
  "payment_intent.expired",
  "payment_intent.cancelled",
  "refund.created",
  "refund.succeeded",
  "refund.failed",
  "api_key.created",
  "api_key.rolled",
  "api_key.revoked",
] as const;

export type EventType = (typeof eventTypes)[number];

/** isEventType tells whether a string names an event type. */
export function isEventType(value: string): value is EventType {
  return (eventTypes as readonly string[]).includes(value);
}

/** The event a new status announces. pending is announced by creation only. */
const eventOfStatus: Record<PaymentIntentStatus, EventType | null> = {
  pending: null,
  processing: "payment_intent.processing",
  requires_action: "payment_intent.requires_action",
  successful: "payment_intent.succeeded",
  failed: "payment_intent.failed",
  expired: "payment_intent.expired",
  cancelled: "payment_intent.cancelled",
};

/**
 * IntentChange is one write to an intent, as every store describes it to
 * eventTypeOf: from null is a creation; declinedAttempt is a declined payment
 * attempt recorded with the change (the status may stay pending).
 */
export interface IntentChange {
  from: PaymentIntentStatus | null;
  to: PaymentIntentStatus;
  declinedAttempt: boolean;
}

/**
 * eventTypeOf is the one rule that says which event a change records (at
 * most one per change): a creation is `created`; a move to another status is
 * that status's event; a declined attempt that leaves the intent payable
 * (pending, or back to pending from processing) is `payment_failed` (a
 * declined attempt that fails the intent is `failed` only). Anything else
 * (an idempotent replay, a no-op) records nothing.
 */
export function eventTypeOf(change: IntentChange): EventType | null {
  if (change.from === null) return "payment_intent.created";
  if (change.to === "pending") return change.declinedAttempt ? "payment_intent.payment_failed" : null;
  return change.from !== change.to ? eventOfStatus[change.to] : null;
}

/** The event a refund's change records: its creation, or the processor's final answer. */
const eventOfRefundStatus: Record<RefundStatus, EventType> = {
  pending: "refund.created",
  successful: "refund.succeeded",
  failed: "refund.failed",
};

/**
 * refundEventTypeOf is the rule for refunds, as eventTypeOf is for intents:
 * every write of a refund's status records one event (a refund is created
 * pending, and settles once), and writes that keep it pending record none.
 */
export function refundEventTypeOf(change: { from: RefundStatus | null; to: RefundStatus }): EventType | null {
  if (change.from === null) return "refund.created";
  return change.from === change.to ? null : eventOfRefundStatus[change.to];
}

/**
 * EventRecord is one recorded event. It is written once, in the transaction
 * of the change it reports, and never changes. Both renderings are made at
 * that moment, so every reader and every delivery attempt sees the same bytes.
 */
export interface EventRecord {
  /** "evt_" + UUIDv7; the webhook-id header. */
  id: string;
  merchantId: string;
  type: EventType;
  /** The intent a payment_intent.* or refund.* event reports; "" for an api_key.* event. */
  paymentIntentId: string;
  /** Its payment intent's mode (issue 23, §1): only keys and endpoints of that mode see it. */
  livemode: boolean;
  /** When the change happened (the service clock). */
  createdAt: Date;
  /** payments.v2.Event in binary protobuf: what ListEvents, GetEvent and StreamEvents answer. */
  payload: Uint8Array;
  /** The Event's REST JSON: the webhook body, signed and sent byte for byte, and GET /v2/events/{id}. */
  body: string;
}
