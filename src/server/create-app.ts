import { randomBytes } from "node:crypto";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { RequestOutcome } from "../observability/observe-requests.js";
import { createRequestScope, scopedLogger } from "../observability/request-scope.js";
import { createOpenApiDocument } from "../openapi/openapi-document.js";
import { createOpenApiRoutes } from "../openapi/openapi-routes.js";
import { createPageTokenCodec } from "../service/page-token.js";
import type { PaymentProcessor } from "../processor/payment-processor.js";
import { createTestModeProcessor } from "../processor/test-mode-processor.js";
import { createCheckoutService } from "../service/checkout-service.js";
import { ignorePaymentEvents, type PaymentEvents } from "../service/payment-events.js";
import { createPaymentExpiry } from "../service/payment-expiry.js";
import { createPaymentIntentService } from "../service/payment-intent-service.js";
import { createPaymentIntentPresenter } from "../service/payment-intent-view.js";
import { createPaymentMethodCatalogue } from "../service/payment-method-catalogue.js";
import { createSettlementAccountService } from "../service/settlement-account-service.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { MerchantDirectory } from "../store/merchant-directory.js";
import type { SettlementAccountStore } from "../store/settlement-account-store.js";
import { createCheckoutRoutes } from "../transport/checkout/checkout-routes.js";
import { createCsrf } from "../transport/checkout/csrf.js";
import { createHandler } from "./create-handler.js";
import type { HttpRoute } from "./http-route.js";
import type { NodeHandler } from "./node-http.js";
import type { RpcService } from "./rpc-service.js";

export interface AppOptions {
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
  verifier: ApiKeyVerifier;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  /** Where customers reach the service: the origin of every checkoutLink. */
  publicUrl: string;
  basePath: string;
  /** Third-party processor names offered beside card, bank_transfer and ussd. */
  processors: readonly string[];
  /** Signs page tokens; instances that share a database must share it. */
  pageTokenSecret: string;
  maxBodyBytes: number;
  /** Plain HTTP endpoints served beside the API (pages, health, metrics). */
  httpRoutes?: readonly HttpRoute[];
  /** RPC services served beside the API without an API key (gRPC health, reflection). */
  rpcServices?: readonly RpcService[];
  /** Told of every created intent and status change (metrics). */
  events?: PaymentEvents;
  /** Told of every finished request, on every protocol (metrics). */
  onRequestEnd?: (outcome: RequestOutcome) => void;
  /** Merchant display names for the checkout page; default: the merchant id. */
  merchants?: MerchantDirectory;
  /** Moves the money; default: the test-mode processor. */
  processor?: PaymentProcessor;
  /** How long a pending intent can be paid (CHECKOUT_TTL); default 24 hours. */
  checkoutTtlMs?: number;
  /** Declined attempts after which an intent fails (MAX_PAYMENT_ATTEMPTS); default 3. */
  maxPaymentAttempts?: number;
  /** Signs the checkout forms' CSRF fields (CHECKOUT_SECRET); default: random per process. */
  checkoutSecret?: string;
}

export const defaultCheckoutTtlMs = 24 * 60 * 60 * 1000;
export const defaultMaxPaymentAttempts = 3;

/**
 * createApp assembles the service from its parts: services over the given
 * stores, and the transports over the services. It reads no environment and
 * opens no port, so tests build it with in-memory stores and a fixed clock.
 */
export function createApp(options: AppOptions): NodeHandler {
  // Lines written while serving a request carry its id (see createHandler).
  const requestScope = createRequestScope();
  const catalogue = createPaymentMethodCatalogue(options.processors);
  const events = options.events ?? ignorePaymentEvents;
  const paymentIntents = createPaymentIntentService({
    intents: options.intents,
    accounts: options.accounts,
    catalogue,
    presenter: createPaymentIntentPresenter({ publicUrl: options.publicUrl, catalogue }),
    pageTokens: createPageTokenCodec(options.pageTokenSecret),
    clock: options.clock,
    ids: options.ids,
    events,
    checkoutTtlMs: options.checkoutTtlMs ?? defaultCheckoutTtlMs,
  });
  const checkout = createCheckoutService({
    intents: options.intents,
    merchants: options.merchants ?? { nameOf: async (merchantId) => merchantId },
    processor: options.processor ?? createTestModeProcessor(),
    catalogue,
    expiry: createPaymentExpiry({ intents: options.intents, clock: options.clock, events }),
    events,
    clock: options.clock,
    ids: options.ids,
    maxAttempts: options.maxPaymentAttempts ?? defaultMaxPaymentAttempts,
  });
  const checkoutRoutes = createCheckoutRoutes({
    checkout,
    csrf: createCsrf({
      secret: options.checkoutSecret ?? randomBytes(32).toString("base64url"),
      secureCookie: options.publicUrl.startsWith("https:"),
    }),
    publicUrl: options.publicUrl,
    logger: scopedLogger(options.logger, requestScope),
  });
  const settlementAccounts = createSettlementAccountService({
    accounts: options.accounts,
    clock: options.clock,
    ids: options.ids,
  });
  return createHandler({
    paymentIntents,
    settlementAccounts,
    verifier: options.verifier,
    basePath: options.basePath,
    maxBodyBytes: options.maxBodyBytes,
    logger: options.logger,
    requestScope,
    httpRoutes: [...(options.httpRoutes ?? []), checkoutRoutes, ...openApiRoutes(options.basePath)],
    rpcServices: options.rpcServices,
    onRequestEnd: options.onRequestEnd,
  });
}

/** The REST API's OpenAPI document and docs page, under the API's own base path. */
function openApiRoutes(basePath: string): HttpRoute[] {
  return createOpenApiRoutes({ basePath, document: createOpenApiDocument({ basePath }) });
}
