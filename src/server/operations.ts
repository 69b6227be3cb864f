import type { DescService } from "@bufbuild/protobuf";
import { Health } from "../../gen/health/v1/health_pb.js";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { RefundService } from "../../gen/payments/v2/refunds_pb.js";
import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import { WebhookEndpointService } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import type { HttpRoute } from "../http/http-route.js";
import type { Procedure } from "../pipeline/procedure.js";
import { createGrpcHealthProcedures } from "../procedures/grpc-health.js";
import { createReflectionProcedures } from "../procedures/reflection.js";
import { createHealthRoutes } from "./health-routes.js";
import type { Readiness } from "../observability/readiness.js";

/** The API's RPC services, as createApp serves them; health and reflection describe these. */
export const apiServices = [PaymentIntentService, SettlementAccountService, EventService, WebhookEndpointService, RefundService] as const;

/** Operations is what an operator's tools talk to, beside the API and without a key. */
export interface Operations {
  /** GET /healthz and GET /readyz, for createApp's httpRoutes. */
  httpRoutes: HttpRoute[];
  /** grpc.health.v1.Health and server reflection (v1, v1alpha), for createApp's procedures. */
  procedures: Procedure[];
}

export interface OperationsOptions {
  /** Services served beside the API's (the test helpers, when on): reflected and reported by gRPC health. */
  extraServices?: readonly DescService[];
  /** METRICS_TOKEN: guards /readyz detail as it guards /metrics. */
  detailToken?: string;
}

/**
 * createOperations builds the probes and the gRPC tooling services over one
 * readiness, so HTTP and gRPC health can never disagree.
 */
export function createOperations(readiness: Readiness, options: OperationsOptions = {}): Operations {
  const services = [...apiServices, ...(options.extraServices ?? [])];
  return {
    httpRoutes: createHealthRoutes(readiness, { detailToken: options.detailToken }),
    procedures: [
      ...createGrpcHealthProcedures({ readiness, services: services.map((service) => service.typeName) }),
      ...createReflectionProcedures([...services, Health]),
    ],
  };
}
