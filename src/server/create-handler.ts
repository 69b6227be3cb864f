import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { Logger } from "../lib/logger.js";
import { createRequestClassifier } from "../observability/classify-request.js";
import { observeRequests, type RequestOutcome } from "../observability/observe-requests.js";
import { createRequestScope, merchantRecordingVerifier, scopedLogger, type RequestScope } from "../observability/request-scope.js";
import type { PaymentIntentService as PaymentIntentRules } from "../service/payment-intent-service.js";
import type { SettlementAccountService as SettlementAccountRules } from "../service/settlement-account-service.js";
import { createAuthInterceptor } from "../transport/connect/auth-interceptor.js";
import { createInternalErrorInterceptor } from "../transport/connect/internal-error-interceptor.js";
import { createPaymentIntentHandlers } from "../transport/connect/payment-intent-handlers.js";
import { createSettlementAccountHandlers } from "../transport/connect/settlement-account-handlers.js";
import { paymentMethodAdapter } from "../transport/rest/payment-method-adapter.js";
import { createRestGateway, restImplementationKey, type UnaryMethodImpl } from "../transport/rest/rest-gateway.js";
import { createRouteTable } from "../transport/rest/route-table.js";
import { pathOf, type HttpRoute } from "./http-route.js";
import type { NodeHandler } from "./node-http.js";
import type { RpcService } from "./rpc-service.js";


export interface HandlerOptions {
  paymentIntents: PaymentIntentRules;
  settlementAccounts: SettlementAccountRules;
  verifier: ApiKeyVerifier;
  /** REST mount point, "/v1" by default in the configuration. */
  basePath: string;
  /** Largest request body, REST and RPC alike. */
  maxBodyBytes: number;
  logger: Logger;
  /** Plain HTTP endpoints tried before the REST gateway. */
  httpRoutes?: readonly HttpRoute[];
  /** RPC services served beside the API without an API key (gRPC health, reflection). */
  rpcServices?: readonly RpcService[];
  /** Told of every finished request, after its log line (metrics). */
  onRequestEnd?: (outcome: RequestOutcome) => void;
  /** The scope requests run in, for loggers built outside (checkout pages); a new one when absent. */
  requestScope?: RequestScope;
}

/**
 * createHandler builds the one request handler behind the port: gRPC,
 * gRPC-Web and Connect are served by connect-node from the generated service
 * descriptors; every other path goes to the first matching plain HTTP route,
 * else to the REST gateway, which calls the very same handler functions in
 * process.
 */
export function createHandler(options: HandlerOptions): NodeHandler {
  // Each request runs in a scope that learns its id and merchant: its request
  // log line, and any line written while serving it, carry both.
  const scope = options.requestScope ?? createRequestScope();
  const logger = scopedLogger(options.logger, scope);
  const verifier = merchantRecordingVerifier(options.verifier, scope);

  const services: { service: DescService; impl: ServiceImpl<DescService> }[] = [
    { service: PaymentIntentService, impl: createPaymentIntentHandlers(options.paymentIntents) as ServiceImpl<DescService> },
    {
      service: SettlementAccountService,
      impl: createSettlementAccountHandlers(options.settlementAccounts) as ServiceImpl<DescService>,
    },
  ];

  const implementations = new Map<string, UnaryMethodImpl>();
  for (const { service, impl } of services) {
    for (const method of service.methods) {
      const fn = (impl as unknown as Record<string, UnaryMethodImpl>)[method.localName];
      if (fn) implementations.set(restImplementationKey(service.typeName, method.name), fn.bind(impl));
    }
  }

  const httpRoutes = options.httpRoutes ?? [];
  const restRoutes = createRouteTable(services.map((s) => s.service));
  const rest = createRestGateway({
    routes: restRoutes,
    implementations,
    verifier,
    basePath: options.basePath,
    maxBodyBytes: options.maxBodyBytes,
    adapters: new Map([paymentMethodAdapter]),
    onInternalError: (error, req) =>
      logger.error({ method: req.method, path: pathOf(req.url), err: describeError(error) }, "unexpected error in REST request"),
  });

  const internalErrors = createInternalErrorInterceptor(logger);
  const handler = connectNodeAdapter({
    routes(router) {
      for (const { service, impl } of services) router.service(service, impl);
      // Per-service interceptors replace the adapter's: these need no key.
      for (const { service, impl } of options.rpcServices ?? []) router.service(service, impl, { interceptors: [internalErrors] });
    },
    interceptors: [internalErrors, createAuthInterceptor(verifier)],
    // Unknown JSON fields are an error over Connect too, as they are over REST.
    jsonOptions: { ignoreUnknownFields: false },
    readMaxBytes: options.maxBodyBytes,
    fallback: (req, res) => {
      const path = pathOf(req.url);
      const route = httpRoutes.find((r) => r.matches(path));
      if (!route) return void rest(req, res);
      // A failing page must answer 500, never crash the process.
      Promise.resolve()
        .then(() => route.handle(req, res))
        .catch((error: unknown) => {
          // The route's name, never the path: a path may carry a checkout token.
          logger.error({ method: req.method, route: route.name ?? "(unnamed)", err: describeError(error) }, "unexpected error in HTTP route");
          if (res.headersSent) return void res.destroy();
          res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
          res.end("internal error");
        });
    },
  });
  const procedures = [...services, ...(options.rpcServices ?? [])].flatMap(({ service }) =>
    service.methods.map((method) => `/${service.typeName}/${method.name}`),
  );
  return observeRequests(handler as NodeHandler, {
    logger: options.logger,
    scope,
    classify: createRequestClassifier({ procedures, httpRoutes, restRoutes, basePath: options.basePath }),
    onRequestEnd: options.onRequestEnd,
  });
}

function describeError(error: unknown): unknown {
  return error instanceof Error ? { message: error.message, stack: error.stack } : String(error);
}
