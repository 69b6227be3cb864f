import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from "../store/webhook-endpoint-store.js";
import { timestamp } from "./payment-intent-presenter.js";

/** endpointMessage shows an endpoint as listed: never a secret. */
export function endpointMessage(endpoint: WebhookEndpointRecord): WebhookEndpoint {
  return {
    $typeName: "payments.v2.WebhookEndpoint",
    id: endpoint.id,
    url: endpoint.url,
    eventTypes: [...endpoint.eventTypes],
    ...(endpoint.description !== null && { description: endpoint.description }),
    status: endpoint.status,
    createdAt: timestamp(endpoint.createdAt),
    updatedAt: timestamp(endpoint.updatedAt),
    livemode: endpoint.livemode,
  };
}

/** endpointWithSecretMessage is the answer to a creation or a rotation: the one place a secret is shown. */
export function endpointWithSecretMessage(endpoint: WebhookEndpointRecord, secret: string): WebhookEndpointWithSecret {
  const { $typeName: _, ...fields } = endpointMessage(endpoint);
  return { ...fields, $typeName: "payments.v2.WebhookEndpointWithSecret", secret };
}

/** deliveryMessage shows one delivery with its attempts, oldest first. */
export function deliveryMessage(delivery: WebhookDeliveryRecord): WebhookDelivery {
  return {
    $typeName: "payments.v2.WebhookDelivery",
    id: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    webhookEndpointId: delivery.endpointId,
    status: delivery.status,
    ...(delivery.nextAttemptAt !== null && { nextAttemptAt: timestamp(delivery.nextAttemptAt) }),
    attempts: delivery.attempts.map((attempt) => ({
      $typeName: "payments.v2.WebhookAttempt",
      at: timestamp(attempt.at),
      ...(attempt.statusCode !== null && { statusCode: attempt.statusCode }),
      durationMs: attempt.durationMs,
      ...(attempt.error !== null && { error: attempt.error }),
    })),
    createdAt: timestamp(delivery.createdAt),
    updatedAt: timestamp(delivery.updatedAt),
  };
}
