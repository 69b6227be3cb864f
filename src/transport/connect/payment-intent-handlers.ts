import type { ServiceImpl } from "@connectrpc/connect";
import { PaymentIntentService } from "../../../gen/payments/v2/payment_intent_pb.js";
import type { PaymentIntentService as PaymentIntentRules } from "../../service/payment-intent-service.js";
import { requirePrincipal } from "../principal-context.js";
import { paymentIntentListItemToProto, paymentIntentToProto } from "../to-proto.js";

/**
 * The response header that marks an idempotent replay. RPC clients read it as
 * response metadata; the REST gateway forwards it and answers 200 instead of 201.
 */
export const idempotentReplayedHeader = "idempotent-replayed";

/**
 * createPaymentIntentHandlers adapts the service to the generated RPC
 * interface. The same handlers serve gRPC, gRPC-Web, Connect and REST.
 */
export function createPaymentIntentHandlers(rules: PaymentIntentRules): ServiceImpl<typeof PaymentIntentService> {
  return {
    async createPaymentIntent(request, context) {
      const { intent, replayed } = await rules.create(requirePrincipal(context).merchantId, request);
      if (replayed) context.responseHeader.set(idempotentReplayedHeader, "true");
      return paymentIntentToProto(intent);
    },
    async getPaymentIntent(request, context) {
      return paymentIntentListItemToProto(await rules.get(requirePrincipal(context).merchantId, request.id));
    },
    async listPaymentIntents(request, context) {
      const page = await rules.list(requirePrincipal(context).merchantId, request);
      return {
        paymentIntents: page.items.map(paymentIntentListItemToProto),
        nextPageToken: page.nextPageToken ?? "",
      };
    },
    async deletePaymentIntent(request, context) {
      return rules.delete(requirePrincipal(context).merchantId, request.id);
    },
  };
}
