/**
 * The REST API's JSON, as the test server's helpers return it: amounts are
 * strings of digits (proto3 JSON's int64), times RFC 3339 UTC with
 * milliseconds, absent values null. The shapes are generated from the proto
 * (gen/rest/rest_json.ts, by `npm run generate`); these are their public
 * names.
 */
import type { components } from "../../gen/rest/rest_json.js";
import type { ErrorBody } from "../http/http-status.js";

type Schemas = components["schemas"];

/** §2.2: one allowed way to pay. */
export type PaymentMethodJson = Schemas["PaymentMethod"];

/** §2.4: a settlement account. */
export type SettlementAccountJson = Schemas["SettlementAccount"];

/** A payment intent as GET {base_url}/v2/payment-intents/{id} returns it. */
export type PaymentIntentJson = Schemas["PaymentIntentListItem"];

/** One attempt to pay an intent. */
export type PaymentAttemptJson = Schemas["PaymentAttempt"];

/** What the pay helper returns: the attempt, and the intent after it. */
export type TestPaymentJson = Schemas["CreatePaymentAttemptResponse"];

/** A merchant made by the createMerchant helper. */
export type TestMerchantJson = Schemas["CreateMerchantResponse"];

/** The body of every error answer (§7): the REST error writer's, not a proto message. */
export type ErrorJson = ErrorBody;
