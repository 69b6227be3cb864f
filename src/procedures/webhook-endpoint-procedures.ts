import { WebhookEndpointService } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import type { WebhookEndpointService as WebhookEndpointRules } from "../service/webhook-endpoint-service.js";

/** createWebhookEndpointProcedures adapts the service to its RPCs (and, through their google.api.http rules, to REST). */
export function createWebhookEndpointProcedures(rules: WebhookEndpointRules): Procedure[] {
  return defineProcedures(
    WebhookEndpointService,
    {
      createWebhookEndpoint: (request, call) => rules.create(call.merchantId, request, call.livemode),
      listWebhookEndpoints: (_request, call) => rules.list(call.merchantId, call.livemode),
      deleteWebhookEndpoint: (request, call) => rules.delete(call.merchantId, request.id, call.livemode),
      rotateWebhookEndpointSecret: (request, call) => rules.rotateSecret(call.merchantId, request, call.livemode),
      listWebhookDeliveries: (request, call) => rules.listDeliveries(call.merchantId, request, call.livemode),
    },
    { requiresKey: true },
  );
}
