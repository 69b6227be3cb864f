import { STATUS_CODES } from "node:http";

/** One named example of a body (OpenAPI 3.1 §4.8.19). */
export interface Example {
  summary: string;
  value: unknown;
}

/** Examples by name; tools take the first as the default. */
export type Examples = Record<string, Example>;

/** The settings the examples depend on. */
export interface OpenApiExamplesOptions {
  /** PUBLIC_URL: the origin of the example checkoutLink. */
  publicUrl: string;
  /** BASE_PATH: the prefix of the example paths in messages. */
  basePath: string;
}

/** What the document shows for each body. */
export interface OpenApiExamples {
  createPaymentIntentRequest: Examples;
  paymentIntentCreated: Examples;
  paymentIntentReplayed: Examples;
  paymentIntentListItem: Examples;
  paymentIntentPage: Examples;
  paymentIntentDeleted: Examples;
  createSettlementAccountRequest: Examples;
  settlementAccount: Examples;
  settlementAccountList: Examples;
  event: Examples;
  eventPage: Examples;
  redeliverEventRequest: Examples;
  redeliverEventResponse: Examples;
  createWebhookEndpointRequest: Examples;
  webhookEndpointCreated: Examples;
  webhookEndpointRotated: Examples;
  rotateWebhookEndpointSecretRequest: Examples;
  webhookEndpointList: Examples;
  webhookEndpointDeleted: Examples;
  webhookDeliveryPage: Examples;
  createRefundRequest: Examples;
  refundCreated: Examples;
  refundReplayed: Examples;
  refund: Examples;
  refundPage: Examples;
  createApiKeyRequest: Examples;
  apiKeyCreated: Examples;
  apiKeyList: Examples;
  rollApiKeyRequest: Examples;
  apiKeyRolled: Examples;
  apiKeyRevoked: Examples;
  /** The error body of each status the API answers with. */
  errors: Record<number, Examples>;
}

const intentId = "pi_019aa3c4-0f7d-7e21-8a64-93b25c1d7e08";
const accountId = "sa_019aa3c2-5e10-7b3c-9d2e-41f7a8c06b15";
const createdAt = "2026-11-21T14:30:11.579Z";
const eventId = "evt_019aa3c6-7b1e-7c4a-9f57-1d2e3f405162";
const endpointId = "we_019aa3b0-4c2d-7a19-8e6f-2b7c9d0e1f34";
const deliveryId = "whd_019aa3c6-7b20-7d01-a3b4-5c6d7e8f9012";
const refundId = "rf_019aa3d1-3c52-7e90-8f14-2a6b7c8d9e01";
const apiKeyId = "key_019aa3a8-1d4e-7f20-9b31-6c5d4e3f2a10";

const error = (status: number, message: string) => ({ status, title: STATUS_CODES[status], message });

/**
 * createOpenApiExamples builds an example of every request body and response
 * of the document, as the service really answers (the messages are its own).
 * Tools use them: Swagger UI's try-it-out and Postman collections send the
 * first request example instead of "<integer>" placeholders, mock servers
 * answer with the responses. Spectral and Redocly check each against its
 * schema (npm run lint:openapi), so they cannot drift from the schemas.
 */
export function createOpenApiExamples(options: OpenApiExamplesOptions): OpenApiExamples {
  const apiKey = {
    id: apiKeyId,
    name: "Shop backend",
    mode: "test",
    scopes: ["payment_intents:write"],
    last4: "zbrn",
    lastUsedAt: null,
    createdAt,
    expiresAt: "2027-02-20T00:00:00.000Z",
    allowedCidrs: ["203.0.113.0/24"],
  };
  // A key from API_KEYS or npm run keys: no name, every scope, from anywhere.
  const configuredKey = {
    id: "key_019aa3a0-0b1c-7d2e-8f30-41526374a5b6",
    name: null,
    mode: "test",
    scopes: [],
    last4: null,
    createdAt: "2026-11-21T09:00:00.000Z",
    lastUsedAt: "2026-11-22T07:59:00.000Z",
    expiresAt: null,
    allowedCidrs: [],
  };
  const account = {
    id: accountId,
    accountName: "Ada Stores Ltd",
    accountNumber: "0123456789",
    bankName: "Example Bank",
    bankCode: "058",
    createdAt: "2026-11-20T09:12:45.031Z",
    updatedAt: "2026-11-20T09:12:45.031Z",
    livemode: false,
  };
  const createRequest = {
    amount: 50000,
    customerEmail: "ada@example.com",
    clientReference: "order-1001",
    paymentMethod: ["card", "bank_transfer"],
    callbackUrl: "https://shop.example.com/paid",
    meta: [{ name: "order_id", value: "A-1001" }],
  };
  const intentFields = {
    id: intentId,
    amount: "50000",
    totalAmount: "50000",
    currency: "NGN",
    receiptEmail: "ada@example.com",
    customerEmail: "ada@example.com",
    country: "NG",
    status: "pending",
    checkoutLink: `${options.publicUrl}/checkout/Xq3v9yR2mT8kLp4wZ7nB1cD5fG6hJ0aE2sU4iO8eQ1w`,
    clientReference: "order-1001",
    paymentMethods: [
      { id: "pm_card", type: "card", attributes: [{ name: "Visa" }, { name: "Mastercard" }, { name: "Verve" }] },
      { id: "pm_bank_transfer", type: "bank_transfer", attributes: [{ name: "Virtual account" }] },
    ],
    callbackUrl: "https://shop.example.com/paid",
    transaction: null,
    meta: [{ name: "order_id", value: "A-1001" }],
    amountRefunded: "0",
    nextAction: null,
    livemode: false,
  };
  const intent = { ...intentFields, settlementAccounts: [], createdAt, updatedAt: createdAt };
  const intentWithSplit = {
    ...intentFields,
    id: "pi_019aa3c5-2a41-7c08-b1f3-0d6e94a2c731",
    clientReference: "order-1002",
    meta: [],
    settlementAccounts: [{ settlementAccountId: accountId, splitAmount: "45000" }],
    createdAt: "2026-11-21T14:31:02.114Z",
    updatedAt: "2026-11-21T14:31:02.114Z",
  };
  const listItem = { ...intentFields, settlementAccount: account, createdAt, updatedAt: createdAt };
  const paid = {
    ...listItem,
    status: "successful",
    transaction: "txn_test_4f9a0c2e7b1d83a65e0f2c49",
    updatedAt: "2026-11-21T14:33:40.802Z",
  };

  const succeededEvent = { id: eventId, type: "payment_intent.succeeded", timestamp: paid.updatedAt, data: paid, refund: null, livemode: false, apiKey: null };
  const createdEvent = {
    id: "evt_019aa3c4-0f80-7a55-b2c1-6e3d8f9a0b12",
    type: "payment_intent.created",
    timestamp: createdAt,
    data: listItem,
    refund: null,
    livemode: false,
    apiKey: null,
  };
  const refund = {
    id: refundId,
    paymentIntentId: intentId,
    amount: "2500",
    status: "successful",
    reason: "requested_by_customer",
    clientReference: "rf-1",
    failureReason: null,
    livemode: false,
    createdAt: "2026-11-22T10:04:51.230Z",
    updatedAt: "2026-11-22T10:04:51.412Z",
    meta: [{ name: "ticket", value: "SUP-4411" }],
  };
  const pendingRefund = { ...refund, status: "pending", updatedAt: refund.createdAt };
  const failedRefund = {
    ...refund,
    id: "rf_019aa3d0-8e11-7c42-9a05-6b7c8d9e0f12",
    amount: "10000",
    clientReference: "rf-0",
    status: "failed",
    failureReason: "The card's issuer refused the refund.",
    createdAt: "2026-11-22T09:58:02.004Z",
    updatedAt: "2026-11-22T09:58:02.215Z",
    livemode: false,
  };
  const refundSucceededEvent = {
    id: "evt_019aa3d1-3c55-7d10-b6e2-8f9a0b1c2d3e",
    type: "refund.succeeded",
    timestamp: refund.updatedAt,
    data: { ...paid, amountRefunded: "2500", updatedAt: refund.createdAt },
    refund,
    livemode: false,
    apiKey: null,
  };
  const endpoint = {
    id: endpointId,
    url: "https://shop.example.com/webhooks/payments",
    eventTypes: ["payment_intent.succeeded", "payment_intent.failed"],
    description: "Order fulfilment",
    status: "enabled",
    createdAt: "2026-11-20T09:15:02.410Z",
    updatedAt: "2026-11-20T09:15:02.410Z",
    livemode: false,
  };
  const pendingDelivery = {
    id: deliveryId,
    eventId,
    eventType: "payment_intent.succeeded",
    webhookEndpointId: endpointId,
    status: "pending",
    nextAttemptAt: "2026-11-21T14:33:45.802Z",
    attempts: [{ at: "2026-11-21T14:33:40.802Z", statusCode: 503, durationMs: 87, error: null }],
    createdAt: paid.updatedAt,
    updatedAt: "2026-11-21T14:33:40.889Z",
  };
  const succeededDelivery = {
    ...pendingDelivery,
    id: "whd_019aa3c4-0f81-7b02-8c3d-4e5f60718293",
    eventId: createdEvent.id,
    eventType: "payment_intent.created",
    status: "succeeded",
    nextAttemptAt: null,
    attempts: [{ at: createdAt, statusCode: 204, durationMs: 41, error: null }],
    createdAt,
    updatedAt: "2026-11-21T14:30:11.620Z",
  };

  return {
    createPaymentIntentRequest: {
      basic: { summary: "Card or bank transfer, back to the shop after paying", value: createRequest },
      withSplit: {
        summary: "With part of the amount split to a settlement account (register it first)",
        value: {
          ...createRequest,
          clientReference: "order-1002",
          meta: undefined,
          settlementAccounts: [{ settlementAccountId: accountId, splitAmount: 45000 }],
        },
      },
      minimal: {
        summary: "Only the required fields: every enabled payment method",
        value: { amount: 250000, customerEmail: "ada@example.com", clientReference: "order-1003" },
      },
    },
    paymentIntentCreated: {
      basic: { summary: "A new pending intent", value: intent },
      withSplit: { summary: "With a split", value: intentWithSplit },
    },
    paymentIntentReplayed: { basic: { summary: "The intent stored for order-1001", value: intent } },
    paymentIntentListItem: {
      pending: { summary: "Waiting for the customer", value: listItem },
      successful: { summary: "Paid: transaction is set", value: paid },
    },
    paymentIntentPage: {
      firstPage: {
        summary: "A page with another after it",
        value: { paymentIntents: [paid], nextPageToken: "AZqjxA99fiGKZJOyXB1-CGQAAAABmhBzIwABmQ" },
      },
      lastPage: { summary: "The last page: no nextPageToken", value: { paymentIntents: [listItem] } },
    },
    paymentIntentDeleted: {
      deleted: { summary: "Cancelled", value: { status: 200, title: "OK", message: `Payment intent ${intentId} deleted` } },
    },
    createSettlementAccountRequest: {
      nuban: {
        summary: "A ten-digit NUBAN at a bank",
        value: { accountName: "Ada Stores Ltd", accountNumber: "0123456789", bankName: "Example Bank", bankCode: "058" },
      },
    },
    settlementAccount: { registered: { summary: "Registered", value: account } },
    settlementAccountList: { accounts: { summary: "Every account, newest first", value: { settlementAccounts: [account] } } },
    event: {
      succeeded: { summary: "The intent was paid", value: succeededEvent },
      created: { summary: "The intent was created", value: createdEvent },
      refundSucceeded: { summary: "A refund of the intent succeeded", value: refundSucceededEvent },
      apiKeyCreated: {
        summary: "An API key was made (never its secret)",
        value: { id: "evt_019aa3a8-1d50-7e61-9c72-8d9eafb0c1d2", type: "api_key.created", timestamp: createdAt, data: null, refund: null, livemode: false, apiKey },
      },
    },
    eventPage: {
      firstPage: { summary: "A page with another after it", value: { events: [succeededEvent], nextPageToken: "AZqjxkDmfiGKZJOyXB1-CGQAAAABmhBzIwABmQ" } },
      lastPage: { summary: "The last page: no nextPageToken", value: { events: [createdEvent] } },
    },
    redeliverEventRequest: {
      everyEndpoint: { summary: "To every enabled endpoint that takes the type", value: {} },
      oneEndpoint: { summary: "To one endpoint", value: { webhookEndpointId: endpointId } },
    },
    redeliverEventResponse: {
      queued: { summary: "One delivery queued", value: { deliveries: [{ ...pendingDelivery, attempts: [], nextAttemptAt: "2026-11-22T08:00:00.000Z", createdAt: "2026-11-22T08:00:00.000Z", updatedAt: "2026-11-22T08:00:00.000Z" }] } },
    },
    createWebhookEndpointRequest: {
      someTypes: {
        summary: "Payments that succeeded or failed",
        value: { url: endpoint.url, eventTypes: endpoint.eventTypes, description: endpoint.description },
      },
      everyType: { summary: "Every event type", value: { url: "https://shop.example.com/webhooks/all" } },
    },
    webhookEndpointCreated: {
      created: { summary: "Registered: keep the secret, it is shown only now", value: { ...endpoint, secret: "whsec_+41B4jabsZ/CG+pQRpfoRbGrC5+kQxN1VLQVKy3NClU=" } },
    },
    webhookEndpointRotated: {
      rotated: {
        summary: "A new secret; the old one keeps signing for 24 hours",
        value: { ...endpoint, secret: "whsec_IsZdxqoj9K+pqD/dELfyZF2UY+ZDuJI3iyyijCVU3eU=", updatedAt: "2026-11-22T08:00:00.000Z" },
      },
    },
    rotateWebhookEndpointSecretRequest: { empty: { summary: "No fields", value: {} } },
    webhookEndpointList: { endpoints: { summary: "Every endpoint, oldest first", value: { webhookEndpoints: [endpoint] } } },
    webhookEndpointDeleted: {
      deleted: { summary: "Deleted", value: { status: 200, title: "OK", message: `Webhook endpoint ${endpointId} deleted` } },
    },
    webhookDeliveryPage: {
      firstPage: { summary: "A page with another after it", value: { deliveries: [pendingDelivery], nextPageToken: "AZqjxkDofiGKZJOyXB1-CGQAAAABmhBzIwABmQ" } },
      lastPage: { summary: "The last page: no nextPageToken", value: { deliveries: [succeededDelivery] } },
    },
    createRefundRequest: {
      part: { summary: "Part of the payment", value: { amount: 2500, reason: "requested_by_customer", clientReference: "rf-1" } },
      rest: { summary: "Everything that is left", value: { clientReference: "rf-2" } },
    },
    refundCreated: {
      successful: { summary: "The processor refunded at once", value: refund },
      pending: { summary: "The processor confirms later", value: pendingRefund },
    },
    refundReplayed: { stored: { summary: "The refund stored for rf-1", value: refund } },
    refund: {
      successful: { summary: "Refunded", value: refund },
      failed: { summary: "The processor failed it: the amount is refundable again", value: failedRefund },
    },
    refundPage: {
      firstPage: { summary: "A page with another after it", value: { refunds: [refund], nextPageToken: "AZqj0TxSfpCPFCprfI2eAQAAAZqj0Tx_cmZfMDE" } },
      lastPage: { summary: "The last page: no nextPageToken", value: { refunds: [failedRefund] } },
    },
    createApiKeyRequest: {
      restricted: {
        summary: "A key that reads and creates payment intents, from one network, for 90 days",
        value: { name: "Shop backend", scopes: ["payment_intents:write"], allowedCidrs: ["203.0.113.0/24"], expiresAt: "2027-02-20T00:00:00.000Z" },
      },
      everything: { summary: "A key that may do everything the calling key may", value: { name: "CI" } },
    },
    apiKeyCreated: { created: { summary: "Made: keep the secret, it is shown only now", value: { ...apiKey, secret: "sk_test_8aspm4G7VmSUfOoD6V1vrORcmn0iSH2Xzbrn" } } },
    apiKeyList: { keys: { summary: "Every key not revoked, oldest first", value: { apiKeys: [{ ...apiKey, lastUsedAt: "2026-11-22T08:01:00.000Z" }, { ...configuredKey }] } } },
    rollApiKeyRequest: {
      grace: { summary: "The old key keeps working for a day", value: { graceSeconds: 86400 } },
      now: { summary: "The old key stops at once (a leaked key)", value: {} },
    },
    apiKeyRolled: {
      rolled: {
        summary: "The new key, with the old one's name, scopes and networks",
        value: { ...apiKey, id: "key_019aa3e2-7a10-7c33-8d44-5e6f7a8b9c0d", last4: "M4J6", createdAt: "2026-11-22T08:00:00.000Z", secret: "sk_test_ztys355NrAlpgsJGcDc2bhARePpktW3GM4J6" },
      },
    },
    apiKeyRevoked: { revoked: { summary: "Revoked", value: { status: 200, title: "OK", message: `API key ${apiKeyId} revoked` } } },
    errors: {
      400: {
        badValue: { summary: "A bad value", value: error(400, "amount must be an integer") },
        unknownField: { summary: "A field the API does not have", value: error(400, "unknown field amout") },
        badQuery: { summary: "A bad query parameter", value: error(400, "pageSize must be an integer from 1 to 100") },
      },
      401: { invalidKey: { summary: "An unknown API key", value: error(401, "API key is not valid") } },
      403: {
        missingScope: { summary: "A key without the operation's scope", value: error(403, "this API key lacks the scope payment_intents:write") },
        otherNetwork: { summary: "A key used from outside its allowedCidrs", value: error(403, "this API key is not accepted from this client's address (see its allowedCidrs)") },
      },
      404: {
        unknownIntent: { summary: "No such intent for this merchant", value: error(404, `payment intent ${intentId} not found`) },
        unknownEvent: { summary: "No such event for this merchant", value: error(404, `event ${eventId} not found`) },
        unknownEndpoint: { summary: "No such webhook endpoint for this merchant", value: error(404, `webhook endpoint ${endpointId} not found`) },
        unknownRefund: { summary: "No such refund for this merchant", value: error(404, `refund ${refundId} not found`) },
        unknownApiKey: { summary: "No such API key for this merchant (or revoked)", value: error(404, `API key ${apiKeyId} not found`) },
      },
      405: {
        wrongMethod: {
          summary: "A method the path does not have",
          value: error(405, `PATCH is not allowed on ${options.basePath}/v2/payment-intents/${intentId}`),
        },
      },
      409: {
        referenceReused: {
          summary: "A used clientReference with a different request",
          value: error(409, `clientReference order-1001 is already used by payment intent ${intentId} with a different request`),
        },
        notPending: {
          summary: "Cancelling an intent that is no longer pending",
          value: error(409, `payment intent ${intentId} is successful and can no longer be deleted`),
        },
        endpointCap: {
          summary: "A merchant at the cap of webhook endpoints",
          value: error(409, "a merchant may register at most 16 webhook endpoints; delete one to add another"),
        },
        endpointDisabled: {
          summary: "Redelivering to a disabled endpoint",
          value: error(409, `webhook endpoint ${endpointId} is disabled and takes no deliveries`),
        },
        notRefundable: {
          summary: "Refunding an intent that is not successful",
          value: error(409, `payment intent ${intentId} is pending: only a successful payment intent can be refunded`),
        },
        refundTooLarge: {
          summary: "Refunding more than is left",
          value: error(409, `amount 60000 is more than the 47500 left to refund of payment intent ${intentId}`),
        },
        refundReferenceReused: {
          summary: "A used refund clientReference with a different request",
          value: error(409, `clientReference rf-1 is already used by refund ${refundId} with a different request`),
        },
        accountRegistered: {
          summary: "An account registered twice",
          value: error(409, `account 0123456789 at bank 058 is already registered as ${accountId}`),
        },
      },
      413: { tooLarge: { summary: "A body over 64 KiB", value: error(413, "request body is larger than 65536 bytes") } },
      415: { notJson: { summary: "Not application/json", value: error(415, "Content-Type must be application/json") } },
      429: {
        rateLimited: {
          summary: "Over the key's rate limit",
          value: error(429, "rate limit exceeded: at most 100 requests per second per API key, bursts of 200; retry after 1 s"),
        },
      },
      500: { internal: { summary: "An unexpected failure", value: error(500, "internal error") } },
      503: { unavailable: { summary: "The database is down", value: error(503, "the database is unavailable; retry later") } },
    },
  };
}
