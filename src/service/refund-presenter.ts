import type { Refund } from "../../gen/payments/v2/refunds_pb.js";
import type { RefundRecord } from "../domain/refund.js";
import { metaMessages } from "./meta-entries.js";
import { timestamp } from "./payment-intent-presenter.js";

/**
 * refundMessage renders a stored refund as the API's Refund: what every
 * protocol answers and what a refund.* event carries. Never the processor's
 * references or the request fingerprint: they are ours to reconcile with.
 */
export function refundMessage(record: RefundRecord): Refund {
  return {
    $typeName: "payments.v2.Refund",
    id: record.id,
    paymentIntentId: record.paymentIntentId,
    amount: record.amount,
    status: record.status,
    reason: record.reason,
    clientReference: record.clientReference ?? undefined,
    failureReason: record.failureReason ?? undefined,
    createdAt: timestamp(record.createdAt),
    updatedAt: timestamp(record.updatedAt),
    meta: metaMessages(record.meta),
    livemode: record.livemode,
  };
}
