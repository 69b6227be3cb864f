import { RefundService } from "../../gen/payments/v2/refunds_pb.js";
import { idempotentReplayedHeader, setResponseHeader } from "../http/request-context.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import type { RefundService as RefundRules } from "../service/refund-service.js";

/**
 * createRefundProcedures adapts the refund service to its RPCs, on every
 * protocol; a replayed create is marked with the idempotent-replayed
 * response header (REST answers 200), as for intents.
 */
export function createRefundProcedures(rules: RefundRules): Procedure[] {
  return defineProcedures(
    RefundService,
    {
      async createRefund(request, call) {
        const { refund, replayed } = await rules.create(call.merchantId, request, call.livemode);
        if (replayed) setResponseHeader(call.context, idempotentReplayedHeader, "true");
        return refund;
      },
      listRefunds: (request, call) => rules.list(call.merchantId, request, call.livemode),
      getRefund: (request, call) => rules.get(call.merchantId, request.id, call.livemode),
    },
    { requiresKey: true },
  );
}
