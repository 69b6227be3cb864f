import { randomBytes } from "node:crypto";
import { ApiKeyService } from "../../gen/payments/v2/api_keys_pb.js";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { RefundService } from "../../gen/payments/v2/refunds_pb.js";
import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import { TestHelperService } from "../../gen/payments/v2/test_helpers_pb.js";
import { WebhookEndpointService } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import type { HttpRoute } from "../http/http-route.js";
import type { NodeHandler } from "../http/node-http.js";
import type { AdvanceableClock } from "../lib/advanceable-clock.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { FailedAuthThrottle } from "../limits/failed-auth-throttle.js";
import type { RateLimit, RateLimiter } from "../limits/rate-limiter.js";
import type { RequestObserver } from "../observability/request-observer.js";
import { createOpenApiDocument } from "../openapi/openapi-document.js";
import { createOpenApiRoutes } from "../openapi/openapi-routes.js";
import { createPipeline } from "../pipeline/pipeline.js";
import type { Procedure } from "../pipeline/procedure.js";
import { createKeyUsage } from "../auth/key-usage.js";
import { scopesOf } from "../auth/scopes.js";
import { createApiKeyProcedures } from "../procedures/api-key-procedures.js";
import { createEventProcedures } from "../procedures/event-procedures.js";
import { createPaymentIntentProcedures } from "../procedures/payment-intent-procedures.js";
import { createRefundProcedures } from "../procedures/refund-procedures.js";
import { createSettlementAccountProcedures } from "../procedures/settlement-account-procedures.js";
import { createTestHelperProcedures, testHelperProceduresOff } from "../procedures/test-helper-procedures.js";
import { createWebhookEndpointProcedures } from "../procedures/webhook-endpoint-procedures.js";
import type { ProcessorRegistry } from "../processor/processor-registry.js";
import type { SettleAttempt } from "../service/settle-attempt.js";
import { createCors, type CorsOptions } from "../protocols/cors.js";
import { createDispatcher } from "../protocols/dispatch.js";
import { createRestEncoders } from "../protocols/rest/encode-json.js";
import { paymentMethodAdapter } from "../protocols/rest/payment-method-adapter.js";
import { createRestProtocol } from "../protocols/rest/rest-protocol.js";
import { createRouteTable } from "../protocols/rest/route-table.js";
import { createRpcServer } from "../protocols/rpc/rpc-server.js";
import { createForcedOutcomes } from "../sandbox/forced-outcomes.js";
import type { MerchantCreationLimits } from "../sandbox/merchant-creation-limits.js";
import { createTestHelperService } from "../sandbox/test-helper-service.js";
import { createApiKeyService } from "../service/api-key-service.js";
import { createCheckoutService } from "../service/checkout-service.js";
import type { EventNotifier } from "../service/event-notifier.js";
import { createEventService } from "../service/event-service.js";
import { createEventStreams } from "../service/event-stream.js";
import type { PaymentEvents } from "../service/payment-events.js";
import type { PaymentExpiry } from "../service/payment-expiry.js";
import type { PaymentIntentPresenter } from "../service/payment-intent-presenter.js";
import { createPaymentIntentService } from "../service/payment-intent-service.js";
import type { PaymentMethodCatalogue } from "../service/payment-method-catalogue.js";
import { createPageTokenCodec, type PageTokenCodec } from "../service/page-token.js";
import { createSettlementAccountService } from "../service/settlement-account-service.js";
import { createWebhookEndpointService } from "../service/webhook-endpoint-service.js";
import { createCheckoutRoutes } from "../transport/checkout/checkout-routes.js";
import { createProcessorWebhookRoute } from "../transport/processor-webhooks/processor-webhook-route.js";
import { createCsrf } from "../transport/checkout/csrf.js";
import { systemResolver, type HostResolver } from "../webhooks/host-resolver.js";
import type { Stores } from "./open-stores.js";
import type { RefundParts } from "./refund-parts.js";

export interface AppOptions {
  /** The stores as the service uses them: intents, accounts, refunds, events, endpoints, keys and merchants. */
  stores: Pick<Stores, "intents" | "accounts" | "events" | "endpoints" | "verifier" | "apiKeys" | "merchants" | "enrollment">;
  /** The payment methods offered (PAYMENT_PROCESSORS), the one the presenter renders with. */
  catalogue: PaymentMethodCatalogue;
  /** Renders intents, with checkoutLinks under publicUrl. */
  presenter: PaymentIntentPresenter;
  /** Expires lapsed intents: the sweep's, also asked by the checkout and the test helpers. */
  expiry: PaymentExpiry;
  /** Moves the money: the processor of each method for the checkout, each attempt's own for its webhooks. */
  processors: ProcessorRegistry;
  /** The setting that adds a live processor, for the 400 a live intent without one gets. */
  liveSetting: string;
  /** RefundService (over the same processors). */
  refunds: Pick<RefundParts, "service" | "notices">;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  /** Where customers reach the service: the origin of every checkoutLink. */
  publicUrl: string;
  basePath: string;
  /** Signs page tokens; instances that share a database must share it. */
  pageTokenSecret: string;
  maxBodyBytes: number;
  /** Plain HTTP endpoints served beside the API (pages, health, metrics). */
  httpRoutes: readonly HttpRoute[];
  /** RPCs served beside the API without an API key (gRPC health, reflection). */
  procedures: readonly Procedure[];
  /** Told of every created intent and status change (metrics). */
  events: PaymentEvents;
  /** Logs and counts every request. */
  observer: RequestObserver;
  /** How long a pending intent can be paid (CHECKOUT_TTL). */
  checkoutTtlMs: number;
  /** Declined attempts after which an intent fails (MAX_PAYMENT_ATTEMPTS). */
  maxPaymentAttempts: number;
  /** Signs the checkout forms' CSRF fields (CHECKOUT_SECRET); default: random per process. */
  checkoutSecret?: string;
  /** CORS_ALLOWED_ORIGINS; unset: no CORS headers at all. */
  cors?: CorsOptions;
  /** The per-API-key limit; absent, keys are not limited. */
  keyLimit?: { limiter: RateLimiter; limit: RateLimit };
  /** Failed authentications per client address; absent, not throttled. */
  failedAuth?: FailedAuthThrottle;
  /** Longest a streaming response waits for a client to read (WRITE_TIMEOUT_MS). */
  streamWriteTimeoutMs: number;
  /** What the event and webhook endpoint API needs beside the stores. */
  webhooks: WebhookApiOptions;
  /** TEST_HELPERS=true: serve TestHelperService; absent, its routes and RPCs do not exist. */
  testHelpers?: TestHelpersOptions;
  /** Per-merchant caps and polling intervals; each has its default. */
  caps?: AppCaps;
  /** PROCESSOR_TIMEOUT_MS: the longest one processor call is waited for. */
  processorTimeoutMs: number;
  /** The one SettleAttempt of the service (the reconciler's too). */
  settle: SettleAttempt;
  /** The test processor's 3-D Secure answer, which serves its test page under /checkout (test mode only). */
  testThreeDs?: (idempotencyKey: string, approve: boolean) => string | undefined;
}

/** AppCaps: per-merchant caps and polling intervals, which tests shrink. */
export interface AppCaps {
  /** Most settlement accounts one merchant may register; default 1000. */
  maxSettlementAccounts?: number;
  /** Most endpoints per merchant; default maxWebhookEndpoints (16). */
  maxEndpointsPerMerchant?: number;
  /** How often a waiting event stream reads the store anyway; default 500 ms. */
  streamPollIntervalMs?: number;
  /** Most open event streams per merchant on this instance; default 10. */
  maxStreamsPerMerchant?: number;
  /** How often an open stream re-checks its API key; default keyRecheckIntervalMs (10 s, the key cache's lifetime). */
  keyRecheckMs?: number;
}

/** What the event and webhook endpoint API needs beyond the stores. */
export interface WebhookApiOptions {
  /** Wakes event streams when this process commits an event. */
  notifier: Pick<EventNotifier, "subscribe">;
  /** WEBHOOK_ALLOW_PRIVATE_URLS. */
  allowPrivateUrls: boolean;
  /** Resolves endpoint hosts at registration; default: the system resolver. */
  resolve?: HostResolver;
  /** Aborted when the server begins to shut down: open event streams end. */
  closing: AbortSignal;
  /** Told when RedeliverEvent queued deliveries (wakes the delivery engine). */
  onRedelivered: () => void;
}

/** What the test helpers need beyond the API's own parts. */
export interface TestHelpersOptions {
  /** TEST_CLOCK=true: the service's clock (also options.clock), which AdvanceClock moves. */
  clock?: AdvanceableClock;
  /** The rate per address and cap (TEST_MERCHANTS_MAX) of CreateMerchant; absent, unlimited. */
  merchantCreation?: MerchantCreationLimits;
}

/**
 * createApp assembles what answers requests from the parts composeService
 * built: services over the stores, procedures over the services, one
 * pipeline, and the protocols and dispatcher in front. It starts nothing and
 * opens no port.
 */
export function createApp(options: AppOptions): NodeHandler {
  const { stores, catalogue, expiry, events, processors } = options;
  const pageTokens = createPageTokenCodec(options.pageTokenSecret);
  const paymentIntents = createPaymentIntentService({
    intents: stores.intents,
    accounts: stores.accounts,
    catalogue,
    presenter: options.presenter,
    pageTokens,
    clock: options.clock,
    ids: options.ids,
    events,
    checkoutTtlMs: options.checkoutTtlMs,
    // A live intent offers only methods a live processor collects (issue 23, §1).
    collectsLive: (method) => {
      const processor = processors.forMethod(method);
      return processor !== undefined && !processor.testMode;
    },
    liveSetting: options.liveSetting,
  });
  // With the helpers on, the checkout's processors answer a helper's charge with the outcome it asked for.
  const outcomes = options.testHelpers && createForcedOutcomes(processors);
  const maxAttempts = options.maxPaymentAttempts;
  const { settle } = options;
  const checkout = createCheckoutService({
    intents: stores.intents,
    merchants: stores.merchants,
    processors: outcomes?.processors ?? processors,
    catalogue,
    expiry,
    events,
    settle,
    clock: options.clock,
    ids: options.ids,
    maxAttempts,
    publicUrl: options.publicUrl,
    processorTimeoutMs: options.processorTimeoutMs,
  });
  const checkoutRoutes = createCheckoutRoutes({
    checkout,
    csrf: createCsrf({
      secret: options.checkoutSecret ?? randomBytes(32).toString("base64url"),
      secureCookie: options.publicUrl.startsWith("https:"),
    }),
    publicUrl: options.publicUrl,
    logger: options.logger,
    testThreeDs: options.testThreeDs,
  });
  // The processor's own webhook settles through the same SettleAttempt (outside BASE_PATH, beside /checkout).
  const processorWebhooks = createProcessorWebhookRoute({
    processors,
    intents: stores.intents,
    settle,
    refunds: options.refunds.notices,
    logger: options.logger,
  });
  const settlementAccounts = createSettlementAccountService({
    accounts: stores.accounts,
    pageTokens,
    maxPerMerchant: options.caps?.maxSettlementAccounts,
    clock: options.clock,
    ids: options.ids,
  });

  const services = [PaymentIntentService, SettlementAccountService, EventService, WebhookEndpointService, TestHelperService, RefundService, ApiKeyService];
  const apiKeys = createApiKeyService({ keys: stores.apiKeys, clock: options.clock, scopes: scopesOf(services) });
  const apiProcedures = [
    ...createPaymentIntentProcedures(paymentIntents),
    ...createApiKeyProcedures(apiKeys),
    ...createSettlementAccountProcedures(settlementAccounts),
    ...webhookProcedures(options, pageTokens),
    ...createRefundProcedures(options.refunds.service(pageTokens)),
  ];
  if (options.testHelpers && outcomes) {
    const helpers = createTestHelperService({
      intents: stores.intents,
      paymentIntents,
      checkout,
      outcomes,
      settle: options.settle,
      expiry,
      enrollment: stores.enrollment,
      clock: options.clock,
      ids: options.ids,
      testClock: options.testHelpers.clock,
      merchantCreation: options.testHelpers.merchantCreation,
    });
    apiProcedures.push(...createTestHelperProcedures(helpers));
  }
  const procedures = [...apiProcedures, ...testHelperProceduresOff(apiProcedures, options.testHelpers !== undefined), ...options.procedures];
  const pipeline = createPipeline({
    verifier: stores.verifier,
    logger: options.logger,
    keyLimit: options.keyLimit,
    failedAuth: options.failedAuth,
    keyRecheckMs: options.caps?.keyRecheckMs,
    onKeyUsed: createKeyUsage({
      clock: options.clock,
      write: (merchantId, keyId, at) => stores.apiKeys.markUsed(merchantId, keyId, at),
      onError: (error) => options.logger.warn({ component: "api_keys", err: error instanceof Error ? error.message : String(error) }, "could not record a key's lastUsedAt"),
    }).used,
  });
  // REST routes for exactly the RPCs served: the test helpers' only when on, the clock's only with TEST_CLOCK.
  const served = new Set(apiProcedures.map((procedure) => procedure.method));
  const restRoutes = createRouteTable(services, (method) => served.has(method));
  const openApi = openApiRoutes(options.basePath, options.publicUrl);
  return createDispatcher({
    procedures,
    httpRoutes: [...options.httpRoutes, ...checkoutRoutes, processorWebhooks, ...openApi],
    restRoutes,
    rest: createRestProtocol({
      routes: restRoutes,
      procedures: new Map(apiProcedures.map((p) => [p.path, p])),
      pipeline,
      encoders: createRestEncoders(),
      basePath: options.basePath,
      maxBodyBytes: options.maxBodyBytes,
      adapters: new Map([paymentMethodAdapter]),
    }),
    rpc: createRpcServer({ pipeline, maxMessageBytes: options.maxBodyBytes, streamWriteTimeoutMs: options.streamWriteTimeoutMs }),
    pipeline,
    basePath: options.basePath,
    observer: options.observer,
    logger: options.logger,
    cors: options.cors && createCors(options.cors),
    publicPaths: [`${options.basePath}/openapi.json`],
  });
}

/** The procedures of EventService and WebhookEndpointService over the given stores. */
function webhookProcedures(options: AppOptions, pageTokens: PageTokenCodec): Procedure[] {
  const { webhooks, caps } = options;
  const { events, endpoints } = options.stores;
  return [
    ...createEventProcedures(
      createEventService({ events, endpoints, pageTokens, clock: options.clock, ids: options.ids, onRedelivered: webhooks.onRedelivered }),
      createEventStreams({
        events,
        notifier: webhooks.notifier,
        pollIntervalMs: caps?.streamPollIntervalMs,
        maxPerMerchant: caps?.maxStreamsPerMerchant,
        closing: webhooks.closing,
      }),
    ),
    ...createWebhookEndpointProcedures(
      createWebhookEndpointService({
        endpoints,
        pageTokens,
        clock: options.clock,
        ids: options.ids,
        allowPrivateUrls: webhooks.allowPrivateUrls,
        resolve: webhooks.resolve ?? systemResolver,
        logger: options.logger,
        maxPerMerchant: caps?.maxEndpointsPerMerchant,
      }),
    ),
  ];
}

/** The REST API's OpenAPI document and docs page, under the API's own base path; its server URL is PUBLIC_URL + BASE_PATH. */
function openApiRoutes(basePath: string, publicUrl: string): HttpRoute[] {
  return createOpenApiRoutes({ basePath, document: createOpenApiDocument({ basePath, publicUrl }) });
}
