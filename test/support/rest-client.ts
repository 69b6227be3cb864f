import assert from "node:assert/strict";
import type { components } from "../../gen/rest/rest_json.js";
import type { ErrorJson, PaymentMethodJson, SettlementAccountJson } from "../../src/testing/rest-json.js";
import type { TestServer } from "./test-server.js";
import { checkoutTokenSource } from "../../src/lib/checkout-token.js";

/** The shapes the ./testing entry publishes are the suites' too (§2.2, §2.4, §7). */
export type { ErrorJson, PaymentMethodJson, SettlementAccountJson };

type Schemas = components["schemas"];

/** The §2.3 split object. */
export type SettlementSplitJson = Schemas["SettlementSplit"];

/** The §2.1 create response. */
export type PaymentIntentJson = Schemas["PaymentIntent"];

/** A §4.2 list item: §2.1 without settlementAccounts, plus settlementAccount. */
export type PaymentIntentListItemJson = Schemas["PaymentIntentListItem"];

export type PaymentIntentListJson = Schemas["ListPaymentIntentsResponse"];

/** A refund as every REST route answers it. */
export type RefundJson = Schemas["Refund"];

/** An event as GET /v2/events/{id} answers it and as it is delivered. */
export type EventJson = Schemas["Event"];

/** A webhook endpoint; secret only in the answers to a creation or a rotation. */
export type EndpointJson = Schemas["WebhookEndpoint"] & { secret?: string };

/** One delivery of an event to an endpoint, with its attempts. */
export type DeliveryJson = Schemas["WebhookDelivery"];

/** An API key as listed, or as made or rolled (with its secret). */
export type ApiKeyJson = Schemas["ApiKey"] & { secret?: string };

/** Keys §2.1 allows in a create response. */
export const paymentIntentKeys = [
  "id",
  "amount",
  "totalAmount",
  "currency",
  "receiptEmail",
  "customerEmail",
  "country",
  "status",
  "checkoutLink",
  "clientReference",
  "paymentMethods",
  "callbackUrl",
  "transaction",
  "meta",
  "settlementAccounts",
  "createdAt",
  "updatedAt",
  // Issue 19's refunds add it to the §2.1 shape.
  "amountRefunded",
  // Issue 19's lifecycle: the customer's next action while requires_action, else null.
  "nextAction",
  // Issue 23's modes: true for an intent made with a live key.
  "livemode",
] as const;

/** Keys a list item may carry (§4.2 and the note under §2.4). */
export const paymentIntentListItemKeys = [
  ...paymentIntentKeys.filter((key) => key !== "settlementAccounts"),
  "settlementAccount",
] as const;

/** Keys §2.4 allows in a settlement account. */
export const settlementAccountKeys = [
  "id",
  "accountName",
  "accountNumber",
  "bankName",
  "bankCode",
  "createdAt",
  "updatedAt",
  "livemode",
] as const;

export const paymentIntentIdPattern = /^pi_test_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const settlementAccountIdPattern = /^sa_test_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** RFC 3339 UTC with milliseconds, as the issue fixes it. */
export const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** checkoutLinkPattern: ${PUBLIC_URL}/checkout/<token>, the token at least 128 bits of base64url. */
export function checkoutLinkPattern(server: TestServer): RegExp {
  return new RegExp(`^${escapeRegExp(server.url)}/checkout/${checkoutTokenSource}$`);
}

/** What the catalogue shows for each method the test server enables (processor "paystack"). */
export const paymentMethodViews = {
  card: { id: "pm_card", type: "card", attributes: [{ name: "Visa" }, { name: "Mastercard" }, { name: "Verve" }] },
  bank_transfer: { id: "pm_bank_transfer", type: "bank_transfer", attributes: [{ name: "Virtual account" }] },
  ussd: { id: "pm_ussd", type: "ussd", attributes: [{ name: "USSD code" }] },
  paystack: { id: "pm_paystack", type: "paystack", attributes: [{ name: "paystack" }] },
} satisfies Record<string, PaymentMethodJson>;

/** Every enabled method in catalogue order: what an omitted paymentMethod allows. */
export const allPaymentMethodViews: PaymentMethodJson[] = [
  paymentMethodViews.card,
  paymentMethodViews.bank_transfer,
  paymentMethodViews.ussd,
  paymentMethodViews.paystack,
];

/** The HTTP reason phrases the error titles must carry (§7). */
export const reasonPhrases: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
};

/** RestResponse is a finished response with its body read. */
export interface RestResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface RestRequestOptions {
  /** Whose key to send; merchantA when neither this nor authorization is given. */
  merchant?: string;
  /** The exact Authorization header, or null to send none. Wins over merchant. */
  authorization?: string | null;
  /** A body to send as JSON. */
  json?: unknown;
  /** A body to send byte for byte (wins over json). */
  raw?: string | Uint8Array;
  /** Content-Type; application/json when a body is sent, null sends none. */
  contentType?: string | null;
}

/**
 * RestClient sends real HTTP requests to a test server's REST API. Paths are
 * relative to the base path ("/v2/payment-intents"); a full URL is used as is.
 */
export interface RestClient {
  request(method: string, path: string, options?: RestRequestOptions): Promise<RestResponse>;
  createIntent(body: unknown, merchant?: string): Promise<RestResponse>;
  listIntents(query?: Record<string, string> | string, merchant?: string): Promise<RestResponse>;
  getIntent(id: string, merchant?: string): Promise<RestResponse>;
  deleteIntent(id: string, merchant?: string): Promise<RestResponse>;
  createAccount(body: unknown, merchant?: string): Promise<RestResponse>;
  listAccounts(merchant?: string): Promise<RestResponse>;
}

/** RestExchange is one request a RestClient sent and the response it got. */
export interface RestExchange {
  method: string;
  url: string;
  /** The server's REST root, to tell API paths from others. */
  restUrl: string;
  requestBody: Uint8Array | undefined;
  response: RestResponse;
}

const exchangeRecorders = new Set<(exchange: RestExchange) => void>();

/**
 * recordRestExchanges shows every exchange of every RestClient in this
 * process to recorder, until the returned function is called: how the OpenAPI
 * test checks the responses the REST suites produce. Opt-in: without a
 * recorder the clients behave as before.
 */
export function recordRestExchanges(recorder: (exchange: RestExchange) => void): () => void {
  exchangeRecorders.add(recorder);
  return () => void exchangeRecorders.delete(recorder);
}

/** createRestClient binds the helpers to one server. */
export function createRestClient(server: TestServer): RestClient {
  async function request(method: string, path: string, options: RestRequestOptions = {}): Promise<RestResponse> {
    const headers: Record<string, string> = {};
    const authorization = options.authorization === undefined ? server.bearer(options.merchant) : options.authorization;
    if (authorization !== null) headers["authorization"] = authorization;
    let body: Uint8Array | undefined;
    if (options.raw !== undefined) body = typeof options.raw === "string" ? Buffer.from(options.raw) : options.raw;
    else if (options.json !== undefined) body = Buffer.from(JSON.stringify(options.json));
    // A Uint8Array body gets no default Content-Type from fetch, so null really sends none.
    const contentType = options.contentType === undefined ? (body ? "application/json" : null) : options.contentType;
    if (contentType !== null) headers["content-type"] = contentType;
    const url = /^https?:/.test(path) ? path : `${server.restUrl}${path}`;
    const res = await fetch(url, { method, headers, body });
    const response = { status: res.status, headers: res.headers, text: await res.text() };
    for (const record of exchangeRecorders) record({ method, url, restUrl: server.restUrl, requestBody: body, response });
    return response;
  }

  return {
    request,
    createIntent: (body, merchant) => request("POST", "/v2/payment-intents", { json: body, merchant }),
    listIntents(query = {}, merchant) {
      const search = typeof query === "string" ? query : new URLSearchParams(query).toString();
      return request("GET", `/v2/payment-intents${search === "" ? "" : `?${search}`}`, { merchant });
    },
    getIntent: (id, merchant) => request("GET", `/v2/payment-intents/${encodeURIComponent(id)}`, { merchant }),
    deleteIntent: (id, merchant) => request("DELETE", `/v2/payment-intents/${encodeURIComponent(id)}`, { merchant }),
    createAccount: (body, merchant) => request("POST", "/v2/settlement-accounts", { json: body, merchant }),
    listAccounts: (merchant) => request("GET", "/v2/settlement-accounts", { merchant }),
  };
}

/**
 * expectJson asserts the status and a JSON Content-Type and returns the parsed
 * body. The failure message carries the body, so a wrong status explains itself.
 */
export function expectJson<T>(res: RestResponse, status: number): T {
  assert.equal(res.status, status, `expected HTTP ${status}, got ${res.status}: ${res.text}`);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json(;|$)/);
  return JSON.parse(res.text) as T;
}

/**
 * expectError asserts a §7 error reply: exactly {status, title, message}, with
 * status equal to the HTTP code, title its reason phrase, and a message that
 * matches (for validation errors: names the field). Returns the message.
 */
export function expectError(res: RestResponse, status: number, message: RegExp): string {
  const body = expectJson<ErrorJson>(res, status);
  assert.equal(typeof body.message, "string", res.text);
  assert.match(body.message, message);
  assert.deepEqual(body, { status, title: reasonPhrases[status], message: body.message });
  return body.message;
}

/** assertOnlyKeys fails when value has a key outside allowed. */
export function assertOnlyKeys(value: object, allowed: readonly string[], what: string): void {
  const extra = Object.keys(value).filter((key) => !allowed.includes(key));
  assert.deepEqual(extra, [], `${what} has keys outside the contract: ${extra.join(", ")}`);
}

/**
 * redactIntent checks the formats of the generated id and checkoutLink of a
 * create response or list item, and replaces them with "<id>" and
 * "<checkoutLink>" so the rest of the body can be compared exactly.
 */
export function redactIntent<T extends { id: string; checkoutLink: string; createdAt: string; updatedAt: string }>(
  server: TestServer,
  intent: T,
): T {
  assert.match(intent.id, paymentIntentIdPattern);
  assert.match(intent.checkoutLink, checkoutLinkPattern(server));
  assert.match(intent.createdAt, timestampPattern);
  assert.match(intent.updatedAt, timestampPattern);
  return { ...intent, id: "<id>", checkoutLink: "<checkoutLink>" };
}

/** listItemOf is what the list (and GET) must show for a created intent with the given account. */
export function listItemOf(
  intent: PaymentIntentJson,
  settlementAccount: SettlementAccountJson | null,
): PaymentIntentListItemJson {
  const { settlementAccounts: _splits, ...rest } = intent;
  return { ...rest, settlementAccount };
}

/** parseNextLink reads the target of a Link header's rel="next" entry (RFC 8288). */
export function parseNextLink(link: string | null): string | undefined {
  if (link === null) return undefined;
  const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(link);
  return match?.[1];
}

let referenceCounter = 0;

/** uniqueReference makes a clientReference no other test in the process uses. */
export function uniqueReference(prefix = "ref"): string {
  referenceCounter += 1;
  return `${prefix}-${process.pid}-${referenceCounter}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
