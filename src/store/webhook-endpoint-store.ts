import type { EventType } from "../domain/event.js";
import type { DeliveryAttempt, DeliveryStatus, DisabledReason } from "./delivery-queue.js";

/** WebhookEndpointRecord is an endpoint as the API shows it: never its secrets. */
export interface WebhookEndpointRecord {
  /** "we_" + UUIDv7. */
  id: string;
  merchantId: string;
  /** The mode of the key that registered it (issue 23, §1): it receives only that mode's events. */
  livemode: boolean;
  /** Normalised and checked at registration (webhooks/endpoint-url.ts). */
  url: string;
  /** The types delivered; empty: every type. */
  eventTypes: EventType[];
  description: string | null;
  status: "enabled" | "disabled";
  /** Why it was disabled; null while enabled. */
  disabledReason: DisabledReason | null;
  createdAt: Date;
  updatedAt: Date;
}

/** NewWebhookEndpoint is an endpoint to register, with its first secret in the clear (the store seals it). */
export interface NewWebhookEndpoint {
  id: string;
  merchantId: string;
  livemode: boolean;
  url: string;
  eventTypes: EventType[];
  description: string | null;
  secret: string;
  createdAt: Date;
}

/** WebhookDeliveryRecord is one delivery as ListWebhookDeliveries shows it: never its body. */
export interface WebhookDeliveryRecord {
  /** "whd_" + UUIDv7. */
  id: string;
  eventId: string;
  eventType: EventType;
  endpointId: string;
  status: DeliveryStatus;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
  /** Null once the delivery has ended. */
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** DeliveryListQuery selects a page of one endpoint's deliveries, newest first (createdAt desc, id desc). */
export interface DeliveryListQuery {
  merchantId: string;
  endpointId: string;
  limit: number;
  after?: { createdAt: Date; id: string };
  status?: DeliveryStatus;
}

/** RedeliveryRequest: a fresh delivery of one event, to every endpoint that takes it or to one. */
export interface RedeliveryRequest {
  merchantId: string;
  eventId: string;
  /** Only this endpoint (enabled or not is checked: a disabled one is refused); undefined: every enabled endpoint taking the type. */
  endpointId?: string;
  /** The new deliveries' createdAt and first due time. */
  at: Date;
  deliveryId: () => string;
}

export type RedeliveryResult =
  | { kind: "queued"; deliveries: WebhookDeliveryRecord[] }
  | { kind: "no-event" }
  | { kind: "no-endpoint" }
  | { kind: "endpoint-disabled" };

export type CreateEndpointResult = { created: true; endpoint: WebhookEndpointRecord } | { created: false; reason: "limit" };

/**
 * WebhookEndpointStore keeps a merchant's webhook endpoints and shows their
 * deliveries; the DeliveryQueue of the same store kind sends them. Every
 * method is scoped to one merchant. Secrets go in through create() and
 * rotateSecret() and come out only through DeliveryQueue.claim().
 */
export interface WebhookEndpointStore {
  /**
   * Registers an endpoint unless the merchant already has maxPerMerchant
   * (enabled or disabled), atomically: concurrent creations never pass the cap.
   */
  create(endpoint: NewWebhookEndpoint, maxPerMerchant: number): Promise<CreateEndpointResult>;
  /** The merchant's endpoints, oldest first (createdAt, then id). */
  list(merchantId: string): Promise<WebhookEndpointRecord[]>;
  findById(merchantId: string, id: string): Promise<WebhookEndpointRecord | undefined>;
  /**
   * Removes the endpoint: it is no longer listed or found, its pending
   * deliveries end as failed (those in flight end when they complete), and
   * no new delivery is made for it. false: no such endpoint.
   */
  delete(merchantId: string, id: string, at: Date): Promise<boolean>;
  /**
   * Replaces the current secret with newSecret in one step
   * (rotateSigningSecrets in domain/signing-secrets.ts: the old one keeps
   * signing for graceMs, any older one stops). undefined: no such endpoint.
   */
  rotateSecret(merchantId: string, id: string, newSecret: string, at: Date, graceMs: number): Promise<WebhookEndpointRecord | undefined>;
  /** A page of one endpoint's deliveries with their attempts; undefined when the endpoint is unknown. */
  listDeliveries(query: DeliveryListQuery): Promise<WebhookDeliveryRecord[] | undefined>;
  /** Queues fresh deliveries of an event (RedeliverEvent), due at once. */
  redeliver(request: RedeliveryRequest): Promise<RedeliveryResult>;
}
