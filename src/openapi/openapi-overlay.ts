import type { Examples, OpenApiExamples } from "./openapi-examples.js";

/** A success answer of an operation: its body is the RPC's output (generated); this says the rest. */
export interface SuccessOverlay {
  description: string;
  /** Response headers besides the common ones, by name → the component header. */
  headers?: Record<string, string>;
  examples: Examples;
}

/** What the proto cannot say of one operation. */
export interface OperationOverlay {
  summary: string;
  /** What the REST answer adds to the RPC's comment (statuses, headers, which errors when). */
  rest?: string;
  /** The success statuses: "200" unless said otherwise (creates answer 201, and 200 on a replay). */
  success: Record<string, SuccessOverlay>;
  /** The error statuses past those every operation can answer (400, 401, 429, 500, 503; 413 and 415 with a body). */
  errors: number[];
  requestExamples?: Examples;
  /** An example of each parameter, by name (what Swagger UI and Postman fill in). */
  parameterExamples?: Record<string, unknown>;
}

/** The tag of a service's operations. */
export interface TagOverlay {
  name: string;
  description: string;
}

/** Everything the hand-written part of the document says about operations. */
export interface ApiOverlay {
  /** By service full name, in the document's order; a service not named here is not in the document. */
  tags: Record<string, TagOverlay>;
  /** By operationId (the RPC's name). */
  operations: Record<string, OperationOverlay>;
}

const intentId = "pi_019aa3c4-0f7d-7e21-8a64-93b25c1d7e08";
const refundId = "rf_019aa3d1-3c52-7e90-8f14-2a6b7c8d9e01";
const eventId = "evt_019aa3c6-7b1e-7c4a-9f57-1d2e3f405162";
const endpointId = "we_019aa3b0-4c2d-7a19-8e6f-2b7c9d0e1f34";
const apiKeyId = "key_019aa3a8-1d4e-7f20-9b31-6c5d4e3f2a10";
const page = (description = "One page.") => ({ description, headers: { Link: "Link" } });

/**
 * createApiOverlay is what the proto cannot say of the REST API (the rest is
 * generated from it, gen/rest/openapi.ts): which services a merchant sees
 * and under which tag (the test helpers exist only in a sandbox), each
 * operation's short title, the statuses and headers of its answers (201 and
 * Location on create, Idempotent-Replayed, Link), the errors it can answer,
 * and examples.
 */
export function createApiOverlay(examples: OpenApiExamples): ApiOverlay {
  return {
    tags: {
      "payments.v2.PaymentIntentService": { name: "Payment intents", description: "Create, read, list and cancel payment intents." },
      "payments.v2.RefundService": { name: "Refunds", description: "Money given back to the customer of a successful payment intent, in one or several parts." },
      "payments.v2.SettlementAccountService": { name: "Settlement accounts", description: "The bank accounts a merchant is paid out to." },
      "payments.v2.EventService": { name: "Events", description: "What happened to the merchant's payment intents: the bodies of webhook deliveries." },
      "payments.v2.WebhookEndpointService": { name: "Webhook endpoints", description: "Where events are delivered, signed as Standard Webhooks, and what was delivered." },
      "payments.v2.ApiKeyService": { name: "API keys", description: "The merchant's own API keys: made, listed, rolled and revoked, each of one mode, with scopes, client networks and an expiry." },
    },
    operations: {
      CreatePaymentIntent: {
        summary: "Create a payment intent",
        rest: "A new intent is 201, with Location. The same clientReference with an identical request (after defaults) replays the stored intent: 200 with Idempotent-Replayed: true. A different request with a used reference, or the reference of a deleted intent, is 409.",
        success: {
          "201": { description: "Created.", headers: { Location: "Location" }, examples: examples.paymentIntentCreated },
          "200": { description: "An idempotent replay: the intent stored for this clientReference.", headers: { "Idempotent-Replayed": "IdempotentReplayed" }, examples: examples.paymentIntentReplayed },
        },
        errors: [409],
        requestExamples: examples.createPaymentIntentRequest,
      },
      ListPaymentIntents: {
        summary: "List payment intents",
        rest: "Newest first (createdAt, then id, descending). Deleted intents never appear. The next page's URL is also in the Link header.",
        success: { "200": { ...page(), examples: examples.paymentIntentPage } },
        errors: [],
        parameterExamples: { pageSize: 20 },
      },
      GetPaymentIntent: {
        summary: "Read a payment intent",
        rest: "Unknown, another merchant's and deleted intents are 404.",
        success: { "200": { description: "The intent.", examples: examples.paymentIntentListItem } },
        errors: [404],
        parameterExamples: { id: intentId },
      },
      DeletePaymentIntent: {
        summary: "Cancel a payment intent",
        rest: "A pending intent becomes cancelled. An intent that is no longer pending is 409; unknown, another merchant's or already deleted is 404.",
        success: { "200": { description: "Deleted.", examples: examples.paymentIntentDeleted } },
        errors: [404, 409],
        parameterExamples: { id: intentId },
      },
      CreateRefund: {
        summary: "Refund a payment intent",
        rest: "Refunds amount (default: everything that is left) of a successful intent: 201 with the refund and Location. The amount is reserved before the processor is asked, so concurrent refunds never add up to more than was paid; the answer shows the processor's outcome when it came in time (successful or failed), else pending, settled later. A failed refund's amount is refundable again. Sending the same clientReference with an identical request replays the stored refund: 200 with Idempotent-Replayed: true; a different request with a used reference is 409, forever. An intent that is not successful, or an amount over what is left, is 409.",
        success: {
          "201": { description: "Created.", headers: { Location: "RefundLocation" }, examples: examples.refundCreated },
          "200": { description: "An idempotent replay: the refund stored for this clientReference, as it is now.", headers: { "Idempotent-Replayed": "IdempotentReplayed" }, examples: examples.refundReplayed },
        },
        errors: [404, 409],
        requestExamples: examples.createRefundRequest,
        parameterExamples: { payment_intent_id: intentId },
      },
      ListRefunds: {
        summary: "List a payment intent's refunds",
        rest: "Newest first (createdAt, then id, descending), with keyset paging as for payment intents; the service's own refunds of a late or duplicate payment included. The next page's URL is also in the Link header.",
        success: { "200": { ...page(), examples: examples.refundPage } },
        errors: [404],
        parameterExamples: { payment_intent_id: intentId, pageSize: 20 },
      },
      GetRefund: {
        summary: "Read a refund",
        rest: "Unknown and another merchant's refunds are 404.",
        success: { "200": { description: "The refund.", examples: examples.refund } },
        errors: [404],
        parameterExamples: { id: refundId },
      },
      CreateSettlementAccount: {
        summary: "Register a settlement account",
        rest: "Registered is 201. Registering the same bankCode and accountNumber twice is 409.",
        success: { "201": { description: "Registered.", examples: examples.settlementAccount } },
        errors: [409],
        requestExamples: examples.createSettlementAccountRequest,
      },
      ListSettlementAccounts: {
        summary: "List settlement accounts",
        rest: "Newest first (createdAt, then id, descending). The next page's URL is also in the Link header.",
        success: { "200": { ...page(), examples: examples.settlementAccountList } },
        errors: [],
        parameterExamples: { pageSize: 20 },
      },
      ListEvents: {
        summary: "List events",
        rest: "Newest first (timestamp, then id, descending). The next page's URL is also in the Link header.",
        success: { "200": { ...page(), examples: examples.eventPage } },
        errors: [],
        parameterExamples: { pageSize: 20 },
      },
      GetEvent: {
        summary: "Read an event",
        rest: "Exactly the body its webhook deliveries carry. Unknown and another merchant's events are 404.",
        success: { "200": { description: "The event.", examples: examples.event } },
        errors: [404],
        parameterExamples: { id: eventId },
      },
      RedeliverEvent: {
        summary: "Deliver an event again",
        rest: "The delivery is due at once. A disabled endpoint is 409; an unknown event or endpoint 404.",
        success: { "200": { description: "Queued.", examples: examples.redeliverEventResponse } },
        errors: [404, 409],
        requestExamples: examples.redeliverEventRequest,
        parameterExamples: { id: eventId },
      },
      CreateWebhookEndpoint: {
        summary: "Register a webhook endpoint",
        rest: "Registered is 201. The URL's host is resolved, and refused when any address is not public. A merchant has at most 16 endpoints; one more is 409.",
        success: { "201": { description: "Registered.", examples: examples.webhookEndpointCreated } },
        errors: [409],
        requestExamples: examples.createWebhookEndpointRequest,
      },
      ListWebhookEndpoints: {
        summary: "List webhook endpoints",
        rest: "Enabled and disabled, oldest first; never a secret.",
        success: { "200": { description: "The endpoints.", examples: examples.webhookEndpointList } },
        errors: [],
      },
      DeleteWebhookEndpoint: {
        summary: "Delete a webhook endpoint",
        rest: "It is no longer listed and no new delivery is made. Unknown, another merchant's or already deleted is 404.",
        success: { "200": { description: "Deleted.", examples: examples.webhookEndpointDeleted } },
        errors: [404],
        parameterExamples: { id: endpointId },
      },
      RotateWebhookEndpointSecret: {
        summary: "Rotate an endpoint's signing secret",
        rest: "The answer shows the new secret, this once.",
        success: { "200": { description: "Rotated.", examples: examples.webhookEndpointRotated } },
        errors: [404],
        requestExamples: examples.rotateWebhookEndpointSecretRequest,
        parameterExamples: { id: endpointId },
      },
      CreateApiKey: {
        summary: "Make an API key",
        rest: "Made is 201, with the key's secret shown this once. A test key makes only test keys; no key makes one with a scope it does not hold (403).",
        success: { "201": { description: "Made.", examples: examples.apiKeyCreated } },
        errors: [],
        requestExamples: examples.createApiKeyRequest,
      },
      ListApiKeys: {
        summary: "List API keys",
        rest: "Keys not revoked, oldest first, of the modes the calling key manages (a live key: both); never a secret.",
        success: { "200": { description: "The keys.", examples: examples.apiKeyList } },
        errors: [],
      },
      RollApiKey: {
        summary: "Roll an API key",
        rest: "Rolled is 201 with the new key's secret, this once; the old key works until graceSeconds have passed (0: stops at once). An expired key is 409.",
        success: { "201": { description: "Rolled.", examples: examples.apiKeyRolled } },
        errors: [404, 409],
        requestExamples: examples.rollApiKeyRequest,
        parameterExamples: { id: apiKeyId },
      },
      RevokeApiKey: {
        summary: "Revoke an API key",
        rest: "The key stops working on every instance within 10 s (at once on the one that answered), its open event streams with it. Unknown, another merchant's or already revoked is 404.",
        success: { "200": { description: "Revoked.", examples: examples.apiKeyRevoked } },
        errors: [404],
        parameterExamples: { id: apiKeyId },
      },
      ListWebhookDeliveries: {
        summary: "List an endpoint's deliveries",
        rest: "Newest first (createdAt, then id, descending), with their attempts. The next page's URL is also in the Link header.",
        success: { "200": { ...page(), examples: examples.webhookDeliveryPage } },
        errors: [404],
        parameterExamples: { id: endpointId, pageSize: 20 },
      },
    },
  };
}
