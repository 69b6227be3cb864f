import type { ProcessorNotice } from "../processor/payment-processor.js";

/** A verified refund notice from a processor's webhook. */
export type RefundNotice = Extract<ProcessorNotice, { kind: "refund" }>;

/**
 * RefundNoticeHandler settles the refund a processor's webhook speaks of. The
 * processor webhook route hands it every verified refund notice and answers
 * 200 once it resolves (so the outcome is committed first); a rejection is a
 * 503, and the processor sends the notice again.
 */
export interface RefundNoticeHandler {
  onRefundNotice(notice: RefundNotice): Promise<void>;
}
