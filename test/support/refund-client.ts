import assert from "node:assert/strict";
import { cards, openCheckout, payByCard } from "../checkout/support/checkout-client.js";
import {
  expectJson,
  timestampPattern,
  uniqueReference,
  type PaymentIntentJson,
  type PaymentIntentListItemJson,
  type RefundJson,
  type RestClient,
  type RestResponse,
} from "./rest-client.js";

/** What the refund suites share: a paid intent to refund, the refund routes, and the refund's shape. */

export type { RefundJson };

/** Keys every refund answer has, in the order the API writes them. */
export const refundKeys = [
  "id",
  "paymentIntentId",
  "amount",
  "status",
  "reason",
  "clientReference",
  "failureReason",
  "createdAt",
  "updatedAt",
  "meta",
  "livemode",
] as const;

export const refundIdPattern = /^rf_test_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The test card whose payment succeeds and whose refunds the test-mode processor fails. */
export const refundsFailCard = "4000 0000 0000 5126";

export interface PaidIntentOptions {
  amount?: number;
  merchant?: string;
  /** The card paid with: the test card that succeeds unless given. */
  card?: string;
}

/**
 * paidIntent creates an intent over REST and pays it as a customer does: the
 * checkout page, its card form, the test-mode processor. Answers the intent
 * as GET shows it after the payment (status successful).
 */
export async function paidIntent(client: RestClient, options: PaidIntentOptions = {}): Promise<PaymentIntentListItemJson> {
  const created = expectJson<PaymentIntentJson>(
    await client.createIntent(
      { amount: options.amount ?? 50000, customerEmail: "ada@example.com", clientReference: uniqueReference("paid"), paymentMethod: ["card"] },
      options.merchant,
    ),
    201,
  );
  const opened = await openCheckout(created.checkoutLink);
  const paid = await payByCard(created.checkoutLink, opened, { number: options.card ?? cards.succeeds });
  assert.ok(paid.status === 303 || paid.status === 200, `the payment was answered ${paid.status}`);
  const intent = expectJson<PaymentIntentListItemJson>(await client.getIntent(created.id, options.merchant), 200);
  assert.equal(intent.status, "successful", "the payment succeeded");
  return intent;
}

/** The refund routes over REST. */
export interface RefundRoutes {
  create(intentId: string, body: unknown, merchant?: string): Promise<RestResponse>;
  list(intentId: string, query?: string, merchant?: string): Promise<RestResponse>;
  get(refundId: string, merchant?: string): Promise<RestResponse>;
}

export function refundRoutes(client: RestClient): RefundRoutes {
  return {
    create: (intentId, body, merchant) => client.request("POST", `/v2/payment-intents/${encodeURIComponent(intentId)}/refunds`, { json: body, merchant }),
    list: (intentId, query = "", merchant) =>
      client.request("GET", `/v2/payment-intents/${encodeURIComponent(intentId)}/refunds${query === "" ? "" : `?${query}`}`, { merchant }),
    get: (refundId, merchant) => client.request("GET", `/v2/refunds/${encodeURIComponent(refundId)}`, { merchant }),
  };
}

/** expectRefund asserts a refund answer's status code, keys (in order) and formats, and returns it. */
export function expectRefund(res: RestResponse, status: number): RefundJson {
  const refund = expectJson<RefundJson>(res, status);
  assert.deepEqual(Object.keys(refund), [...refundKeys]);
  assert.match(refund.id, refundIdPattern);
  assert.match(refund.createdAt, timestampPattern);
  assert.match(refund.updatedAt, timestampPattern);
  return refund;
}
