import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import { idempotentReplayedHeader, setResponseHeader } from "../http/request-context.js";
import type { PaymentIntentService as PaymentIntentRules } from "../service/payment-intent-service.js";

/**
 * createPaymentIntentProcedures adapts the service to its RPCs. The same
 * procedures serve gRPC, gRPC-Web, Connect and REST; a replayed create is
 * marked with the idempotent-replayed response header (REST answers 200).
 */
export function createPaymentIntentProcedures(rules: PaymentIntentRules): Procedure[] {
  return defineProcedures(
    PaymentIntentService,
    {
      async createPaymentIntent(request, call) {
        const { intent, replayed } = await rules.create(call.merchantId, request, call.livemode);
        if (replayed) setResponseHeader(call.context, idempotentReplayedHeader, "true");
        return intent;
      },
      getPaymentIntent: (request, call) => rules.get(call.merchantId, request.id, call.livemode),
      listPaymentIntents: (request, call) => rules.list(call.merchantId, request, call.livemode),
      deletePaymentIntent: (request, call) => rules.delete(call.merchantId, request.id, call.livemode),
    },
    { requiresKey: true },
  );
}
