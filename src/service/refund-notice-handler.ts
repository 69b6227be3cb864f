import type { Logger } from "../lib/logger.js";
import type { ProcessorNotice } from "../processor/payment-processor.js";

/** A verified refund notice from a processor's webhook. */
export type RefundNotice = Extract<ProcessorNotice, { kind: "refund" }>;

/**
 * RefundNoticeHandler settles the refund a processor's webhook reports. The
 * webhook route answers 2xx only after it resolves, so it resolves only once
 * the outcome is committed (or there was nothing to change).
 */
export interface RefundNoticeHandler {
  onRefundNotice(notice: RefundNotice): Promise<void>;
}

/** logRefundNotices is the default before refunds exist: the notice is logged and nothing changes. */
export function logRefundNotices(logger: Logger): RefundNoticeHandler {
  return {
    async onRefundNotice(notice) {
      logger.warn({ refund: notice.idempotencyKey, noticeId: notice.noticeId, outcome: notice.outcome.kind }, "a refund notice arrived, and refunds are not handled");
    },
  };
}
