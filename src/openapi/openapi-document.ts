import { STATUS_CODES } from "node:http";
import { createOpenApiExamples, type Examples } from "./openapi-examples.js";
import { schemas, type JsonSchema } from "./openapi-schemas.js";

/** Ref points into components (OpenAPI 3.1 §4.8.23). */
export interface Ref {
  $ref: string;
}

/** A query, path or header parameter of an operation. */
export interface Parameter {
  name: string;
  in: "query" | "path" | "header";
  required?: boolean;
  description: string;
  schema: JsonSchema;
  /** What tools fill the parameter with (Postman, Swagger UI). */
  example?: unknown;
}

/** A body: its schema and examples of it. */
export interface MediaType {
  schema: JsonSchema;
  examples: Examples;
}

/** A response header. */
export interface Header {
  description: string;
  required?: boolean;
  schema: JsonSchema;
}

/** One response of an operation: headers and a JSON body. */
export interface Response {
  description: string;
  headers?: Record<string, Header | Ref>;
  content?: Record<string, MediaType>;
}

/** One route: a method on a path. */
export interface Operation {
  /** The RPC that serves the route (its google.api.http rule). */
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: (Parameter | Ref)[];
  requestBody?: { required: boolean; content: Record<string, MediaType> };
  responses: Record<string, Response | Ref>;
}

export type HttpMethod = "get" | "post" | "delete";
export type PathItem = Partial<Record<HttpMethod, Operation>>;

/** The part of an OpenAPI 3.1 document this service writes. */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: {
    title: string;
    version: string;
    description: string;
    contact: { name: string; url: string };
    license: { name: string; identifier: string };
  };
  servers: { url: string; description: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, Parameter>;
    headers: Record<string, Header>;
    responses: Record<string, Response>;
    securitySchemes: Record<string, Record<string, string>>;
  };
  /**
   * Answers that belong to no operation: a path no route matches (404) and a
   * route's path with a method it does not serve (405). OpenAPI describes
   * operations only, so these are named here for tools and the test.
   */
  "x-unrouted-responses": Record<"404" | "405", Response>;
}

export interface OpenApiDocumentOptions {
  /**
   * PUBLIC_URL: the origin clients reach the service at. With basePath it
   * makes the server URL absolute, as Postman, newman, generated clients and
   * Swagger UI's try-it-out need (a relative one resolves against wherever
   * the document was read from, or nothing).
   */
  publicUrl: string;
  /** Where the REST API is mounted (BASE_PATH). */
  basePath: string;
  /** The service's version, shown in info.version. */
  version?: string;
}

const json = (schema: JsonSchema, examples: Examples): Record<string, MediaType> => ({ "application/json": { schema, examples } });
const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string): Ref => ({ $ref: `#/components/headers/${name}` });
const responseRef = (name: string): Ref => ({ $ref: `#/components/responses/${name}` });
const parameterRef = (name: string): Ref => ({ $ref: `#/components/parameters/${name}` });

/** Every REST response carries these. */
const commonHeaders = { "X-Request-Id": headerRef("XRequestId"), "Cache-Control": headerRef("CacheControl") };

/** What each error status means across the API; operations list the ones they can answer. */
const errorMeanings: Record<number, string> = {
  400: "Invalid input: malformed JSON, an unknown or repeated field or query parameter, a bad value. The message names the field.",
  401: "Missing, malformed or unknown API key.",
  404: "No such resource for this merchant (another merchant's and deleted intents included), or no route for the path.",
  405: "The path exists, the method does not; Allow lists the methods it has.",
  409: "Conflicts with stored state: a reused clientReference with a different request, an account registered twice, an intent that is no longer pending, a refund of an intent that is not successful or of more than is left.",
  413: "The body is larger than 64 KiB.",
  415: "The body is not application/json (charset, when given, must be utf-8).",
  429: "Too many requests for this API key; retry after Retry-After seconds.",
  500: "An unexpected failure; logged with the request id, never detailed to the client.",
  503: "The database is unavailable, or the instance is shutting down; retry later.",
};

/** Headers an error status adds to the common ones. */
const errorHeaders: Record<number, Record<string, Header | Ref>> = {
  401: { "WWW-Authenticate": headerRef("WWWAuthenticate") },
  // Inline: only the 405 of x-unrouted-responses has it, and linters count no reference from an extension.
  405: { Allow: { description: "The methods the path has.", required: true, schema: { type: "string", pattern: "^[A-Z]+(, [A-Z]+)*$" } } },
  429: { "Retry-After": headerRef("RetryAfter") },
  503: { "Retry-After": headerRef("RetryAfterOptional") },
};

/** errorResponse is the §7 body with status fixed to the code and title to its reason phrase. */
function errorResponse(status: number, examples: Examples): Response {
  return {
    description: errorMeanings[status]!,
    headers: { ...commonHeaders, ...errorHeaders[status] },
    content: json(
      {
        allOf: [
          schemaRef("Error"),
          { properties: { status: { const: status }, title: { const: STATUS_CODES[status] } } },
        ],
      },
      examples,
    ),
  };
}

/** The error statuses operations answer with; 405 is the answer of no operation. */
const operationErrors = [400, 401, 404, 409, 413, 415, 429, 500, 503];
/** The error statuses every operation can answer: input, key, rate limit, failures. */
const everyOperation = [400, 401, 429, 500, 503];
/** And those of operations with a JSON body. */
const withBody = [413, 415];

function errors(...statuses: number[]): Record<string, Ref> {
  return Object.fromEntries([...statuses].sort().map((status) => [String(status), responseRef(`Error${status}`)]));
}

/** pageSize and pageToken: keyset paging, the same on every list. */
const pagingParameters = [
  {
    name: "pageSize",
    in: "query",
    description: "Items per page, 1–100; default 50.",
    schema: { type: "integer", minimum: 1, maximum: 100, default: 50 },
    example: 20,
  },
  {
    name: "pageToken",
    in: "query",
    description: "nextPageToken of the previous page: opaque, signed, bound to the merchant and the filters.",
    schema: { type: "string", minLength: 1 },
  },
] as const;

const idParameter: Parameter = {
  name: "id",
  in: "path",
  required: true,
  description: "The payment intent's id (pi_…).",
  schema: { type: "string", minLength: 1 },
  example: "pi_019aa3c4-0f7d-7e21-8a64-93b25c1d7e08",
};

/** The path id of an event or an endpoint route. */
const pathId = (description: string, example: string): Parameter => ({
  name: "id",
  in: "path",
  required: true,
  description,
  schema: { type: "string", minLength: 1 },
  example,
});
const eventIdParameter = pathId("The event's id (evt_…).", "evt_019aa3c6-7b1e-7c4a-9f57-1d2e3f405162");
const endpointIdParameter = pathId("The webhook endpoint's id (we_…).", "we_019aa3b0-4c2d-7a19-8e6f-2b7c9d0e1f34");
const refundIdParameter = pathId("The refund's id (rf_…).", "rf_019aa3d1-3c52-7e90-8f14-2a6b7c8d9e01");
/** The intent a refund route is under; named as the request field it fills. */
const refundedIntentParameter: Parameter = { ...idParameter, name: "payment_intent_id" };

/**
 * createOpenApiDocument describes the REST API: one operation per
 * google.api.http rule of the proto (a test holds the two to each other), every
 * parameter, body, response, header and error. It is written by hand, because
 * the REST contract refines proto3 JSON (always-present nulls, int64 strings,
 * millisecond times, 201 vs 200) in ways a generator would not know; the test
 * that validates real responses against it keeps it honest.
 */
export function createOpenApiDocument(options: OpenApiDocumentOptions): OpenApiDocument {
  const { basePath, publicUrl } = options;
  const examples = createOpenApiExamples({ publicUrl, basePath });
  return {
    openapi: "3.1.0",
    info: {
      title: "Payment Intent API",
      version: options.version ?? "2",
      description: [
        "Merchants create payment intents (a request to collect an amount from a customer), hand the customer the intent's checkoutLink, and list or cancel their intents.",
        "Amounts are integers in kobo (50000 is NGN 500.00); responses render them as strings of digits.",
        "Every request needs `Authorization: Bearer {api key}` and is scoped to the key's merchant.",
        "Every response carries `X-Request-Id` (the request's own when it sent a sane one) and `Cache-Control: no-store`.",
        "Every non-2xx response is `{status, title, message}`.",
        "The same operations are served over gRPC, gRPC-Web and Connect (services payments.v2.PaymentIntentService, payments.v2.RefundService, payments.v2.SettlementAccountService, payments.v2.EventService and payments.v2.WebhookEndpointService); EventService.StreamEvents, a server stream, is served there only.",
      ].join("\n\n"),
      contact: { name: "Payment Intent API documentation", url: `${publicUrl}${basePath}/docs` },
      // SPDX names a license outside its list LicenseRef-…: the API is not open source.
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    // No jsonSchemaDialect: 3.1's default dialect is what the schemas use, and
    // naming it anyway makes Stoplight Prism skip validating bodies.
    servers: [{ url: `${publicUrl}${basePath}`, description: "This service (PUBLIC_URL + BASE_PATH)." }],
    security: [{ apiKey: [] }],
    tags: [
      { name: "Payment intents", description: "Create, read, list and cancel payment intents." },
      { name: "Refunds", description: "Money given back to the customer of a successful payment intent, in one or several parts." },
      { name: "Settlement accounts", description: "The bank accounts a merchant is paid out to." },
      { name: "Events", description: "What happened to the merchant's payment intents: the bodies of webhook deliveries." },
      { name: "Webhook endpoints", description: "Where events are delivered, signed as Standard Webhooks, and what was delivered." },
    ],
    paths: {
      "/v2/payment-intents": {
        post: {
          operationId: "CreatePaymentIntent",
          summary: "Create a payment intent",
          description:
            "Creates an intent (201, with Location). Sending the same clientReference with an identical request (after defaults) replays the stored intent: 200 with Idempotent-Replayed: true. A different request with a used reference, or the reference of a deleted intent, is 409.",
          tags: ["Payment intents"],
          parameters: [parameterRef("XRequestId")],
          requestBody: { required: true, content: json(schemaRef("CreatePaymentIntentRequest"), examples.createPaymentIntentRequest) },
          responses: {
            "201": {
              description: "Created.",
              headers: { ...commonHeaders, Location: headerRef("Location") },
              content: json(schemaRef("PaymentIntent"), examples.paymentIntentCreated),
            },
            "200": {
              description: "An idempotent replay: the intent stored for this clientReference.",
              headers: { ...commonHeaders, "Idempotent-Replayed": headerRef("IdempotentReplayed") },
              content: json(schemaRef("PaymentIntent"), examples.paymentIntentReplayed),
            },
            ...errors(...everyOperation, ...withBody, 409),
          },
        },
        get: {
          operationId: "ListPaymentIntents",
          summary: "List payment intents",
          description:
            "Newest first (createdAt, then id, descending), with keyset paging. Deleted intents never appear. The next page's URL is also in the Link header.",
          tags: ["Payment intents"],
          parameters: [
            parameterRef("XRequestId"),
            ...pagingParameters,
            { name: "clientReference", in: "query", description: "Only the intent with this reference.", schema: schemaRef("ClientReference") },
            { name: "status", in: "query", description: "Only intents in this status.", schema: schemaRef("PaymentIntentStatus") },
          ],
          responses: {
            "200": {
              description: "One page.",
              headers: { ...commonHeaders, Link: headerRef("Link") },
              content: json(schemaRef("ListPaymentIntentsResponse"), examples.paymentIntentPage),
            },
            ...errors(...everyOperation),
          },
        },
      },
      "/v2/payment-intents/{id}": {
        get: {
          operationId: "GetPaymentIntent",
          summary: "Read a payment intent",
          description: "What to call after the customer comes back to callbackUrl. Unknown, another merchant's and deleted intents are 404.",
          tags: ["Payment intents"],
          parameters: [parameterRef("XRequestId"), idParameter],
          responses: {
            "200": {
              description: "The intent.",
              headers: commonHeaders,
              content: json(schemaRef("PaymentIntentListItem"), examples.paymentIntentListItem),
            },
            ...errors(...everyOperation, 404),
          },
        },
        delete: {
          operationId: "DeletePaymentIntent",
          summary: "Cancel a payment intent",
          description:
            "A soft delete: a pending intent becomes cancelled, is kept for audit and disappears from the API. An intent that is no longer pending is 409; unknown, another merchant's or already deleted is 404.",
          tags: ["Payment intents"],
          parameters: [parameterRef("XRequestId"), idParameter],
          responses: {
            "200": {
              description: "Deleted.",
              headers: commonHeaders,
              content: json(schemaRef("DeletePaymentIntentResponse"), examples.paymentIntentDeleted),
            },
            ...errors(...everyOperation, 404, 409),
          },
        },
      },
      "/v2/payment-intents/{payment_intent_id}/refunds": {
        post: {
          operationId: "CreateRefund",
          summary: "Refund a payment intent",
          description:
            "Refunds amount (default: everything that is left) of a successful intent: 201 with the refund and Location. The amount is reserved before the processor is asked, so concurrent refunds never add up to more than was paid; the answer shows the processor's outcome when it came in time (successful or failed), else pending, settled later. A failed refund's amount is refundable again. Sending the same clientReference with an identical request replays the stored refund: 200 with Idempotent-Replayed: true; a different request with a used reference is 409, forever. An intent that is not successful, or an amount over what is left, is 409.",
          tags: ["Refunds"],
          parameters: [parameterRef("XRequestId"), refundedIntentParameter],
          requestBody: { required: true, content: json(schemaRef("CreateRefundRequest"), examples.createRefundRequest) },
          responses: {
            "201": {
              description: "Created.",
              headers: { ...commonHeaders, Location: headerRef("RefundLocation") },
              content: json(schemaRef("Refund"), examples.refundCreated),
            },
            "200": {
              description: "An idempotent replay: the refund stored for this clientReference, as it is now.",
              headers: { ...commonHeaders, "Idempotent-Replayed": headerRef("IdempotentReplayed") },
              content: json(schemaRef("Refund"), examples.refundReplayed),
            },
            ...errors(...everyOperation, ...withBody, 404, 409),
          },
        },
        get: {
          operationId: "ListRefunds",
          summary: "List a payment intent's refunds",
          description:
            "Newest first (createdAt, then id, descending), with keyset paging as for payment intents; the service's own refunds of a late or duplicate payment included. The next page's URL is also in the Link header.",
          tags: ["Refunds"],
          parameters: [parameterRef("XRequestId"), refundedIntentParameter, ...pagingParameters],
          responses: {
            "200": {
              description: "One page.",
              headers: { ...commonHeaders, Link: headerRef("Link") },
              content: json(schemaRef("ListRefundsResponse"), examples.refundPage),
            },
            ...errors(...everyOperation, 404),
          },
        },
      },
      "/v2/refunds/{id}": {
        get: {
          operationId: "GetRefund",
          summary: "Read a refund",
          description: "Unknown and another merchant's refunds are 404.",
          tags: ["Refunds"],
          parameters: [parameterRef("XRequestId"), refundIdParameter],
          responses: {
            "200": { description: "The refund.", headers: commonHeaders, content: json(schemaRef("Refund"), examples.refund) },
            ...errors(...everyOperation, 404),
          },
        },
      },
      "/v2/settlement-accounts": {
        post: {
          operationId: "CreateSettlementAccount",
          summary: "Register a settlement account",
          description: "Registers a Nigerian bank account (NUBAN). Registering the same bankCode and accountNumber twice is 409.",
          tags: ["Settlement accounts"],
          parameters: [parameterRef("XRequestId")],
          requestBody: {
            required: true,
            content: json(schemaRef("CreateSettlementAccountRequest"), examples.createSettlementAccountRequest),
          },
          responses: {
            "201": { description: "Registered.", headers: commonHeaders, content: json(schemaRef("SettlementAccount"), examples.settlementAccount) },
            ...errors(...everyOperation, ...withBody, 409),
          },
        },
        get: {
          operationId: "ListSettlementAccounts",
          summary: "List settlement accounts",
          description:
            "The merchant's accounts, newest first (createdAt, then id, descending), with keyset paging as for payment intents. The next page's URL is also in the Link header.",
          tags: ["Settlement accounts"],
          parameters: [parameterRef("XRequestId"), ...pagingParameters],
          responses: {
            "200": {
              description: "One page.",
              headers: { ...commonHeaders, Link: headerRef("Link") },
              content: json(schemaRef("ListSettlementAccountsResponse"), examples.settlementAccountList),
            },
            ...errors(...everyOperation),
          },
        },
      },
      "/v2/events": {
        get: {
          operationId: "ListEvents",
          summary: "List events",
          description:
            "Newest first (timestamp, then id, descending), with keyset paging as for payment intents. The next page's URL is also in the Link header.",
          tags: ["Events"],
          parameters: [
            parameterRef("XRequestId"),
            ...pagingParameters,
            { name: "type", in: "query", description: "Only events of this type.", schema: schemaRef("EventType") },
            { name: "paymentIntentId", in: "query", description: "Only events of this payment intent.", schema: { type: "string", minLength: 1, maxLength: 100 } },
          ],
          responses: {
            "200": {
              description: "One page.",
              headers: { ...commonHeaders, Link: headerRef("Link") },
              content: json(schemaRef("ListEventsResponse"), examples.eventPage),
            },
            ...errors(...everyOperation),
          },
        },
      },
      "/v2/events/{id}": {
        get: {
          operationId: "GetEvent",
          summary: "Read an event",
          description: "Exactly the body its webhook deliveries carry. Unknown and another merchant's events are 404.",
          tags: ["Events"],
          parameters: [parameterRef("XRequestId"), eventIdParameter],
          responses: {
            "200": { description: "The event.", headers: commonHeaders, content: json(schemaRef("Event"), examples.event) },
            ...errors(...everyOperation, 404),
          },
        },
      },
      "/v2/events/{id}/redeliver": {
        post: {
          operationId: "RedeliverEvent",
          summary: "Deliver an event again",
          description:
            "Queues a fresh delivery, due at once, to every enabled endpoint that takes the event's type, or to the one named. A disabled endpoint is 409; an unknown event or endpoint 404.",
          tags: ["Events"],
          parameters: [parameterRef("XRequestId"), eventIdParameter],
          requestBody: { required: true, content: json(schemaRef("RedeliverEventRequest"), examples.redeliverEventRequest) },
          responses: {
            "200": { description: "Queued.", headers: commonHeaders, content: json(schemaRef("RedeliverEventResponse"), examples.redeliverEventResponse) },
            ...errors(...everyOperation, ...withBody, 404, 409),
          },
        },
      },
      "/v2/webhook-endpoints": {
        post: {
          operationId: "CreateWebhookEndpoint",
          summary: "Register a webhook endpoint",
          description:
            "Registers an endpoint (201). The answer is the only time its signing secret is shown. The URL's host is resolved, and refused when any address is not public. A merchant has at most 16 endpoints; one more is 409.",
          tags: ["Webhook endpoints"],
          parameters: [parameterRef("XRequestId")],
          requestBody: { required: true, content: json(schemaRef("CreateWebhookEndpointRequest"), examples.createWebhookEndpointRequest) },
          responses: {
            "201": { description: "Registered.", headers: commonHeaders, content: json(schemaRef("WebhookEndpointWithSecret"), examples.webhookEndpointCreated) },
            ...errors(...everyOperation, ...withBody, 409),
          },
        },
        get: {
          operationId: "ListWebhookEndpoints",
          summary: "List webhook endpoints",
          description: "Every endpoint of the merchant, enabled or disabled, oldest first; never a secret.",
          tags: ["Webhook endpoints"],
          parameters: [parameterRef("XRequestId")],
          responses: {
            "200": { description: "The endpoints.", headers: commonHeaders, content: json(schemaRef("ListWebhookEndpointsResponse"), examples.webhookEndpointList) },
            ...errors(...everyOperation),
          },
        },
      },
      "/v2/webhook-endpoints/{id}": {
        delete: {
          operationId: "DeleteWebhookEndpoint",
          summary: "Delete a webhook endpoint",
          description:
            "Removes the endpoint: it is no longer listed, its pending deliveries end as failed and no new one is made. Unknown, another merchant's or already deleted is 404.",
          tags: ["Webhook endpoints"],
          parameters: [parameterRef("XRequestId"), endpointIdParameter],
          responses: {
            "200": { description: "Deleted.", headers: commonHeaders, content: json(schemaRef("DeleteWebhookEndpointResponse"), examples.webhookEndpointDeleted) },
            ...errors(...everyOperation, 404),
          },
        },
      },
      "/v2/webhook-endpoints/{id}/rotate-secret": {
        post: {
          operationId: "RotateWebhookEndpointSecret",
          summary: "Rotate an endpoint's signing secret",
          description: "Replaces the secret and shows the new one, this once. For 24 hours deliveries are signed with the new and the old secret.",
          tags: ["Webhook endpoints"],
          parameters: [parameterRef("XRequestId"), endpointIdParameter],
          requestBody: { required: true, content: json(schemaRef("RotateWebhookEndpointSecretRequest"), examples.rotateWebhookEndpointSecretRequest) },
          responses: {
            "200": { description: "Rotated.", headers: commonHeaders, content: json(schemaRef("WebhookEndpointWithSecret"), examples.webhookEndpointRotated) },
            ...errors(...everyOperation, ...withBody, 404),
          },
        },
      },
      "/v2/webhook-endpoints/{id}/deliveries": {
        get: {
          operationId: "ListWebhookDeliveries",
          summary: "List an endpoint's deliveries",
          description:
            "Newest first (createdAt, then id, descending) with their attempts, with keyset paging. The next page's URL is also in the Link header.",
          tags: ["Webhook endpoints"],
          parameters: [
            parameterRef("XRequestId"),
            endpointIdParameter,
            ...pagingParameters,
            { name: "status", in: "query", description: "Only deliveries in this state.", schema: schemaRef("DeliveryStatus") },
          ],
          responses: {
            "200": {
              description: "One page.",
              headers: { ...commonHeaders, Link: headerRef("Link") },
              content: json(schemaRef("ListWebhookDeliveriesResponse"), examples.webhookDeliveryPage),
            },
            ...errors(...everyOperation, 404),
          },
        },
      },
    },
    components: {
      schemas,
      parameters: {
        XRequestId: {
          name: "X-Request-Id",
          in: "header",
          description: "Your id for this request, echoed in the response and the service's log; replaced by a generated one unless it is 1–128 of A-Z a-z 0-9 . _ : -.",
          schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
        },
      },
      headers: {
        XRequestId: {
          description: "The request id: the one sent when sane, else generated.",
          required: true,
          schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
        },
        CacheControl: { description: "API responses are never cached.", required: true, schema: { type: "string", const: "no-store" } },
        Location: {
          description: "Where the created intent can be read: {BASE_PATH}/v2/payment-intents/{id}.",
          required: true,
          schema: { type: "string", pattern: "^(/[A-Za-z0-9._~-]+)*/v2/payment-intents/pi_[0-9a-f-]{36}$" },
        },
        RefundLocation: {
          description: "Where the created refund can be read: {BASE_PATH}/v2/refunds/{id}.",
          required: true,
          schema: { type: "string", pattern: "^(/[A-Za-z0-9._~-]+)*/v2/refunds/rf_[0-9a-f-]{36}$" },
        },
        IdempotentReplayed: { description: "Marks an idempotent replay.", required: true, schema: { type: "string", const: "true" } },
        Link: {
          description: 'Present when another page exists: the next page\'s URL in angle brackets, then ; rel="next" (RFC 8288).',
          schema: { type: "string", pattern: '^<[^>]+>; rel="next"$' },
        },
        WWWAuthenticate: { description: "The scheme to authenticate with (RFC 6750).", required: true, schema: { type: "string", pattern: "^Bearer" } },
        RetryAfter: { description: "Seconds to wait before retrying.", required: true, schema: { type: "string", pattern: "^[0-9]+$" } },
        RetryAfterOptional: { description: "Seconds to wait before retrying, when known.", schema: { type: "string", pattern: "^[0-9]+$" } },
      },
      // 405 belongs to no operation: it is described under x-unrouted-responses only.
      responses: Object.fromEntries(
        operationErrors.map((status) => [`Error${status}`, errorResponse(status, examples.errors[status]!)]),
      ),
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "The merchant's API key, sent as `Authorization: Bearer {api key}`." },
      },
    },
    "x-unrouted-responses": { "404": errorResponse(404, examples.errors[404]!), "405": errorResponse(405, examples.errors[405]!) },
  };
}
