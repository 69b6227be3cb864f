import type { Logger } from "../lib/logger.js";
import type { RefundStore } from "../store/refund-store.js";
import type { RefundNoticeHandler } from "./refund-notice-handler.js";
import type { RefundSettler } from "./refund-settler.js";

/**
 * createRefundNotices settles refunds from a processor's verified webhook
 * notices, through the same settler as every other path: the same notice
 * twice, or a failure after a success, changes nothing (the settlement is a
 * compare-and-set on pending). A notice about a refund we do not know is
 * logged and changes nothing.
 */
export function createRefundNotices(deps: { refunds: RefundStore; settler: RefundSettler; logger: Logger }): RefundNoticeHandler {
  return {
    async onRefundNotice(notice) {
      const refund = await deps.refunds.findForProcessor(notice.idempotencyKey);
      if (!refund) {
        deps.logger.warn({ refund: notice.idempotencyKey, noticeId: notice.noticeId }, "a processor's notice names a refund we do not know");
        return;
      }
      if (refund.status !== "pending") return;
      await deps.settler.apply(refund, notice.outcome);
    },
  };
}
