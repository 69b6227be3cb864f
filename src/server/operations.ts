import { Health } from "../../gen/health/v1/health_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import { createGrpcHealthHandlers } from "../transport/connect/grpc-health.js";
import { createReflectionServices } from "../transport/connect/reflection.js";
import { createHealthRoutes } from "./health-routes.js";
import type { HttpRoute } from "./http-route.js";
import type { Readiness } from "./readiness.js";
import { rpcService, type RpcService } from "./rpc-service.js";

/** The API's RPC services, as createHandler serves them; health and reflection describe these. */
export const apiServices = [PaymentIntentService, SettlementAccountService] as const;

/** Operations is what an operator's tools talk to, beside the API and without a key. */
export interface Operations {
  /** GET /healthz and GET /readyz, for createApp's httpRoutes. */
  httpRoutes: HttpRoute[];
  /** grpc.health.v1.Health and server reflection (v1, v1alpha), for createApp's rpcServices. */
  rpcServices: RpcService[];
}

/**
 * createOperations builds the probes and the gRPC tooling services over one
 * readiness, so HTTP and gRPC health can never disagree.
 */
export function createOperations(readiness: Readiness): Operations {
  const health = rpcService(
    Health,
    createGrpcHealthHandlers({ readiness, services: apiServices.map((service) => service.typeName) }),
  );
  return {
    httpRoutes: createHealthRoutes(readiness),
    rpcServices: [health, ...createReflectionServices([...apiServices, Health])],
  };
}
