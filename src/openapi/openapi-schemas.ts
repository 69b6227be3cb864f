import { eventTypes } from "../domain/event.js";
import { paymentIntentStatuses } from "../domain/payment-intent.js";
import { automaticRefundReasons, merchantRefundReasons, refundStatuses } from "../domain/refund.js";

/**
 * The JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of the REST bodies.
 * They are strict on purpose: every object is closed
 * (additionalProperties: false) and lists its required keys, int64 values are
 * strings of digits, times carry exactly three fractional digits. A response
 * that gains, loses or reshapes a field fails the OpenAPI test instead of
 * drifting silently from this description.
 */
export type JsonSchema = { [key: string]: unknown };

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });

/** A closed object whose keys are all required unless listed in optional. */
function object(properties: Record<string, JsonSchema>, optional: string[] = [], description?: string): JsonSchema {
  return {
    type: "object",
    ...(description ? { description } : {}),
    additionalProperties: false,
    required: Object.keys(properties).filter((key) => !optional.includes(key)),
    properties,
  };
}

/** A keyset page (as every List… answers): at most 100 items and, when another page exists, its token. */
function page(itemsKey: string, item: string): JsonSchema {
  return object(
    {
      [itemsKey]: { type: "array", maxItems: 100, items: ref(item) },
      nextPageToken: { type: "string", minLength: 1, description: "Present only when another page exists." },
    },
    ["nextPageToken"],
  );
}

const uuidV7 = "[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
/** The service's practical email syntax (field-rules.ts): WHATWG's, plus a dot in the domain. */
const emailPattern =
  "^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$";
const methodNamePattern = "^[a-z][a-z0-9_]*$";

const email = (description: string): JsonSchema => ({ type: "string", maxLength: 254, pattern: emailPattern, description });
const text = (description: string): JsonSchema => ({ type: "string", minLength: 1, maxLength: 100, description });
/** int64 in proto3 JSON: a string of digits, so no client parses money through a float (§2.1). */
const kobo = (description: string): JsonSchema => ({ type: "string", pattern: "^[1-9][0-9]{0,12}$", description });
/** As kobo, where 0 is a value (nothing refunded yet). */
const koboOrZero = (description: string): JsonSchema => ({ type: "string", pattern: "^(0|[1-9][0-9]{0,12})$", description });
const amountInput = (description: string): JsonSchema => ({ type: "integer", minimum: 1, maximum: 1_000_000_000_000, description });

/** The building blocks of the bodies below. */
const parts: Record<string, JsonSchema> = {
  DateTime: {
    type: "string",
    format: "date-time",
    pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$",
    description: "RFC 3339 in UTC with exactly three fractional digits, e.g. 2026-11-21T14:30:11.579Z.",
    examples: ["2026-11-21T14:30:11.579Z"],
  },
  PaymentIntentId: { type: "string", pattern: `^pi_${uuidV7}$`, description: "pi_ + a UUIDv7; opaque." },
  SettlementAccountId: { type: "string", pattern: `^sa_${uuidV7}$`, description: "sa_ + a UUIDv7; opaque." },
  ClientReference: {
    type: "string",
    pattern: "^[A-Za-z0-9._:-]{1,100}$",
    description: "Merchant-chosen reference, unique per merchant forever (deleted intents keep theirs).",
  },
  PaymentIntentStatus: { type: "string", enum: [...paymentIntentStatuses] },
  RefundId: { type: "string", pattern: `^rf_${uuidV7}$`, description: "rf_ + a UUIDv7; opaque." },
  RefundStatus: {
    type: "string",
    enum: [...refundStatuses],
    description: "pending while the processor has it; successful and failed are final.",
  },
  MerchantRefundReason: { type: "string", enum: [...merchantRefundReasons] },
  RefundReason: {
    type: "string",
    enum: [...merchantRefundReasons, ...automaticRefundReasons],
    description: "A merchant's reason, or the service's own for a payment that arrived after the intent closed (payment_after_close, duplicate_payment).",
  },
  EventId: { type: "string", pattern: `^evt_${uuidV7}$`, description: "evt_ + a UUIDv7; the webhook-id header of its deliveries." },
  EventType: { type: "string", enum: [...eventTypes] },
  WebhookEndpointId: { type: "string", pattern: `^we_${uuidV7}$`, description: "we_ + a UUIDv7; opaque." },
  WebhookDeliveryId: { type: "string", pattern: `^whd_${uuidV7}$`, description: "whd_ + a UUIDv7; opaque." },
  DeliveryStatus: { type: "string", enum: ["pending", "succeeded", "failed"] },
  WebhookSecret: {
    type: "string",
    pattern: "^whsec_[A-Za-z0-9+/]{43}=$",
    description: "whsec_ + the base64 of 32 random bytes: the Standard Webhooks signing secret. Shown only in this answer.",
  },
  PaymentMethodAttribute: object({ name: { type: "string", minLength: 1 } }),
  PaymentMethod: object(
    {
      id: { type: "string", pattern: "^pm_[a-z][a-z0-9_]*$", description: "Stable: pm_{name}." },
      type: { type: "string", pattern: methodNamePattern, description: "card, bank_transfer, ussd or a configured processor." },
      attributes: { type: "array", items: ref("PaymentMethodAttribute") },
    },
    [],
    "One allowed way to pay (§2.2).",
  ),
  SettlementSplit: object(
    { settlementAccountId: ref("SettlementAccountId"), splitAmount: kobo("Kobo sent to this account.") },
    [],
    "Part of a payment sent to one settlement account (§2.3).",
  ),
  SettlementAccount: object(
    {
      id: ref("SettlementAccountId"),
      accountName: text("Name on the account."),
      accountNumber: { type: "string", pattern: "^[0-9]{10}$", description: "Ten-digit NUBAN." },
      bankName: text("Name of the bank."),
      bankCode: { type: "string", pattern: "^[0-9]{3,6}$", description: "CBN bank or institution code." },
      createdAt: ref("DateTime"),
      updatedAt: ref("DateTime"),
    },
    [],
    "A bank account the merchant is paid out to (§2.4).",
  ),
};

/** A payment method in a create request: a name, or {"type": name}. */
const paymentMethodInput: JsonSchema = {
  oneOf: [
    { type: "string", pattern: methodNamePattern },
    object({ type: { type: "string", pattern: methodNamePattern } }),
  ],
};

/** The fields a payment intent shows in every shape. */
const intentFields: Record<string, JsonSchema> = {
  id: ref("PaymentIntentId"),
  amount: kobo("Amount in kobo: \"50000\" is NGN 500.00."),
  totalAmount: kobo("What will be paid out; equals amount (no fees yet)."),
  currency: { type: "string", const: "NGN" },
  receiptEmail: email("Receives the receipt; customerEmail unless given."),
  customerEmail: email("The paying customer."),
  country: { type: "string", const: "NG" },
  status: ref("PaymentIntentStatus"),
  checkoutLink: {
    type: "string",
    format: "uri",
    pattern: "/checkout/[A-Za-z0-9_-]{22,}$",
    description: "PUBLIC_URL/checkout/{token}: the page to send the customer to. The token is 256 random bits.",
  },
  clientReference: ref("ClientReference"),
  paymentMethods: { type: "array", minItems: 1, items: ref("PaymentMethod") },
  callbackUrl: nullable({ type: "string", format: "uri", maxLength: 2048 }),
  transaction: nullable({ type: "string", minLength: 1, description: "Reference of the successful payment attempt." }),
  meta: { type: "array", items: { type: "object" }, description: "Always [] for now." },
  amountRefunded: koboOrZero("Kobo refunded or being refunded (refunds pending or successful) of the payment; \"0\" when none."),
};

/** The fields a webhook endpoint shows in both shapes. */
const endpointFields: Record<string, JsonSchema> = {
  id: ref("WebhookEndpointId"),
  url: { type: "string", format: "uri", maxLength: 2048 },
  eventTypes: { type: "array", items: ref("EventType"), description: "The types delivered; []: every type." },
  description: nullable({ type: "string", minLength: 1, maxLength: 256 }),
  status: { type: "string", enum: ["enabled", "disabled"], description: "disabled after a 410 answer or 5 days of failing." },
  createdAt: ref("DateTime"),
  updatedAt: ref("DateTime"),
};

/** components.schemas of the document. */
export const schemas: Record<string, JsonSchema> = {
  ...parts,
  PaymentIntent: object(
    {
      ...intentFields,
      settlementAccounts: { type: "array", maxItems: 10, items: ref("SettlementSplit") },
      createdAt: ref("DateTime"),
      updatedAt: ref("DateTime"),
    },
    [],
    "A payment intent as create returns it (§2.1).",
  ),
  PaymentIntentListItem: object(
    {
      ...intentFields,
      settlementAccount: {
        ...nullable(ref("SettlementAccount")),
        description: "The first split's account; without splits the merchant's earliest account; null without any.",
      },
      createdAt: ref("DateTime"),
      updatedAt: ref("DateTime"),
    },
    [],
    "A payment intent as read and list show it (§4.2).",
  ),
  ListPaymentIntentsResponse: page("paymentIntents", "PaymentIntentListItem"),
  ListSettlementAccountsResponse: page("settlementAccounts", "SettlementAccount"),
  DeletePaymentIntentResponse: object({
    status: { type: "integer", const: 200 },
    title: { type: "string", const: "OK" },
    message: { type: "string", pattern: "^Payment intent pi_\\S+ deleted$" },
  }),
  Event: object(
    {
      id: ref("EventId"),
      type: ref("EventType"),
      timestamp: ref("DateTime"),
      data: { ...ref("PaymentIntentListItem"), description: "The intent right after the change, as GET /v2/payment-intents/{id} shows it." },
      refund: { ...nullable(ref("Refund")), description: "The refund a refund.* event reports, right after the change; null for other events." },
    },
    [],
    "One change to a payment intent or one of its refunds; exactly the body of its webhook deliveries.",
  ),
  ListEventsResponse: page("events", "Event"),
  RedeliverEventRequest: object(
    { webhookEndpointId: { type: "string", minLength: 1, description: "Only to this endpoint; omitted: every enabled endpoint that takes the type." } },
    ["webhookEndpointId"],
  ),
  RedeliverEventResponse: object({ deliveries: { type: "array", items: ref("WebhookDelivery"), description: "The deliveries queued (due at once)." } }),
  WebhookAttempt: object(
    {
      at: ref("DateTime"),
      statusCode: nullable({ type: "integer", minimum: 100, maximum: 599, description: "The endpoint's HTTP status; null when no answer came." }),
      durationMs: { type: "integer", minimum: 1, description: "Omitted when 0." },
      error: nullable({ type: "string", minLength: 1, description: "Why it failed: a timeout, a refused connection or address." }),
    },
    ["durationMs"],
    "One try at a delivery: never its body, a header or a secret.",
  ),
  WebhookDelivery: object(
    {
      id: ref("WebhookDeliveryId"),
      eventId: ref("EventId"),
      eventType: ref("EventType"),
      webhookEndpointId: ref("WebhookEndpointId"),
      status: ref("DeliveryStatus"),
      nextAttemptAt: { ...nullable(ref("DateTime")), description: "When the next attempt is due; null once the delivery has ended." },
      attempts: { type: "array", items: ref("WebhookAttempt"), description: "Oldest first." },
      createdAt: ref("DateTime"),
      updatedAt: ref("DateTime"),
    },
    [],
    "One event on its way to one endpoint.",
  ),
  ListWebhookDeliveriesResponse: page("deliveries", "WebhookDelivery"),
  WebhookEndpoint: object(endpointFields, [], "A webhook endpoint as listed: never its secret."),
  WebhookEndpointWithSecret: object(
    { ...endpointFields, secret: ref("WebhookSecret") },
    [],
    "The answer to a creation or a rotation: the endpoint and its new signing secret.",
  ),
  ListWebhookEndpointsResponse: object({ webhookEndpoints: { type: "array", items: ref("WebhookEndpoint"), description: "Oldest first." } }),
  DeleteWebhookEndpointResponse: object({
    status: { type: "integer", const: 200 },
    title: { type: "string", const: "OK" },
    message: { type: "string", pattern: "^Webhook endpoint we_\\S+ deleted$" },
  }),
  CreateWebhookEndpointRequest: object(
    {
      url: {
        type: "string",
        minLength: 1,
        maxLength: 2048,
        description:
          "Absolute https URL without credentials, its host a DNS name or IP literal that resolves only to public addresses (http and private addresses only with WEBHOOK_ALLOW_PRIVATE_URLS=true).",
      },
      eventTypes: nullable({ type: "array", uniqueItems: true, items: ref("EventType"), description: "The types to deliver; omitted or []: every type." }),
      description: nullable({ type: "string", maxLength: 256, description: "Your note, at most 256 characters; omitted or empty: none." }),
    },
    ["eventTypes", "description"],
    "null in any optional field means the field was not given.",
  ),
  RotateWebhookEndpointSecretRequest: object({}, [], "No fields: send {}."),
  Error: object(
    {
      status: { type: "integer", minimum: 400, maximum: 599, description: "The HTTP status code." },
      title: { type: "string", minLength: 1, description: "The status's HTTP reason phrase." },
      message: { type: "string", minLength: 1, description: "What went wrong; names the field for validation errors; never internals." },
    },
    [],
    "Every non-2xx response (§7).",
  ),
  CreatePaymentIntentRequest: object(
    {
      amount: amountInput("Kobo, a JSON integer (not a string): 1 to 1,000,000,000,000."),
      customerEmail: email("The paying customer."),
      clientReference: ref("ClientReference"),
      currency: nullable({ type: "string", const: "NGN", description: "Only NGN; omitted means NGN." }),
      receiptEmail: nullable(email("Omitted means customerEmail.")),
      paymentMethod: nullable({
        type: "array",
        minItems: 1,
        maxItems: 10,
        items: paymentMethodInput,
        description: "Allowed methods, each once; omitted means every enabled method; [] is refused.",
      }),
      callbackUrl: nullable({
        type: "string",
        maxLength: 2048,
        pattern: "^[Hh][Tt][Tt][Pp][Ss]?://",
        description:
          "Absolute http(s) URL without credentials, its host a DNS name or IP literal. Read as a browser reads it (an internationalised host, percent-encoded host characters, a backslash for a slash) and stored in that normalised form.",
      }),
      settlementAccounts: nullable({
        type: "array",
        maxItems: 10,
        items: object({ settlementAccountId: { type: "string", minLength: 1 }, splitAmount: amountInput("Kobo, at least 1.") }),
        description: "Splits to the caller's own accounts, each account once, adding up to at most amount.",
      }),
    },
    ["currency", "receiptEmail", "paymentMethod", "callbackUrl", "settlementAccounts"],
    "null in any optional field means the field was not given.",
  ),
  Refund: object(
    {
      id: ref("RefundId"),
      paymentIntentId: ref("PaymentIntentId"),
      amount: kobo("Kobo given back."),
      status: ref("RefundStatus"),
      reason: ref("RefundReason"),
      clientReference: { ...nullable(ref("ClientReference")), description: "The merchant's reference; null for the service's own refunds." },
      failureReason: nullable({ type: "string", minLength: 1, description: "Why a failed refund failed." }),
      createdAt: ref("DateTime"),
      updatedAt: ref("DateTime"),
    },
    [],
    "One refund of a payment intent.",
  ),
  ListRefundsResponse: page("refunds", "Refund"),
  CreateRefundRequest: object(
    {
      amount: nullable(amountInput("Kobo, a JSON integer: 1 up to what is left to refund; omitted means everything that is left.")),
      reason: nullable({ ...ref("MerchantRefundReason"), description: "Omitted means requested_by_customer." }),
      clientReference: ref("ClientReference"),
    },
    ["amount", "reason"],
    "null in any optional field means the field was not given.",
  ),
  CreateSettlementAccountRequest: object({
    accountName: text("Name on the account."),
    accountNumber: { type: "string", pattern: "^[0-9]{10}$", description: "Ten-digit NUBAN (the check digit is not verified)." },
    bankName: text("Name of the bank."),
    bankCode: { type: "string", pattern: "^[0-9]{3,6}$" },
  }),
};
