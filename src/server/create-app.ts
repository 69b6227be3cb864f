import { randomBytes } from "node:crypto";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { RefundService } from "../../gen/payments/v2/refunds_pb.js";
import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import { TestHelperService } from "../../gen/payments/v2/test_helpers_pb.js";
import { WebhookEndpointService } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { HttpRoute } from "../http/http-route.js";
import type { NodeHandler } from "../http/node-http.js";
import type { AdvanceableClock } from "../lib/advanceable-clock.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { FailedAuthThrottle } from "../limits/failed-auth-throttle.js";
import type { RateLimit, RateLimiter } from "../limits/rate-limiter.js";
import { createRequestObserver, type RequestObserver, type RequestOutcome } from "../observability/request-observer.js";
import { createOpenApiDocument } from "../openapi/openapi-document.js";
import { createOpenApiRoutes } from "../openapi/openapi-routes.js";
import { createPipeline } from "../pipeline/pipeline.js";
import type { Procedure } from "../pipeline/procedure.js";
import { createEventProcedures } from "../procedures/event-procedures.js";
import { createPaymentIntentProcedures } from "../procedures/payment-intent-procedures.js";
import { createRefundProcedures } from "../procedures/refund-procedures.js";
import { createSettlementAccountProcedures } from "../procedures/settlement-account-procedures.js";
import { createTestHelperProcedures } from "../procedures/test-helper-procedures.js";
import { createWebhookEndpointProcedures } from "../procedures/webhook-endpoint-procedures.js";
import type { PaymentProcessor } from "../processor/payment-processor.js";
import { createTestModeProcessor } from "../processor/test-mode-processor.js";
import { createSettleAttempt } from "../service/attempt-settler.js";
import type { SettleAttempt } from "../service/settle-attempt.js";
import { createLoggingLateSuccessHandler } from "../service/late-success-handler.js";
import { defaultProcessorTimeoutMs } from "./refund-parts.js";
import { createCors, type CorsOptions } from "../protocols/cors.js";
import { createDispatcher } from "../protocols/dispatch.js";
import { createRestEncoders } from "../protocols/rest/encode-json.js";
import { paymentMethodAdapter } from "../protocols/rest/payment-method-adapter.js";
import { createRestProtocol } from "../protocols/rest/rest-protocol.js";
import { createRouteTable } from "../protocols/rest/route-table.js";
import { createRpcServer } from "../protocols/rpc/rpc-server.js";
import { createForcedOutcomes } from "../sandbox/forced-outcomes.js";
import type { MerchantEnrollment } from "../sandbox/merchant-enrollment.js";
import { createTestHelperService } from "../sandbox/test-helper-service.js";
import { createCheckoutService } from "../service/checkout-service.js";
import type { EventNotifier } from "../service/event-notifier.js";
import { createEventService } from "../service/event-service.js";
import { createEventStreams } from "../service/event-stream.js";
import { ignorePaymentEvents, type PaymentEvents } from "../service/payment-events.js";
import { createPaymentExpiry } from "../service/payment-expiry.js";
import { createPaymentIntentPresenter } from "../service/payment-intent-presenter.js";
import { createPaymentIntentService } from "../service/payment-intent-service.js";
import { createPaymentMethodCatalogue } from "../service/payment-method-catalogue.js";
import { createPageTokenCodec, type PageTokenCodec } from "../service/page-token.js";
import { createSettlementAccountService } from "../service/settlement-account-service.js";
import { createWebhookEndpointService } from "../service/webhook-endpoint-service.js";
import type { EventStore } from "../store/event-store.js";
import type { MerchantDirectory } from "../store/merchant-directory.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { SettlementAccountStore } from "../store/settlement-account-store.js";
import type { WebhookEndpointStore } from "../store/webhook-endpoint-store.js";
import { createCheckoutRoutes } from "../transport/checkout/checkout-routes.js";
import { createProcessorWebhookRoute } from "../transport/processor-webhooks/processor-webhook-route.js";
import { createLoggingRefundNoticeHandler } from "../service/refund-notice-handler.js";
import { createCsrf } from "../transport/checkout/csrf.js";
import { systemResolver, type HostResolver } from "../webhooks/host-resolver.js";
import { defaultListenLimits } from "../listener/listen-limits.js";
import type { RefundParts } from "./refund-parts.js";

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
  /** RPCs served beside the API without an API key (gRPC health, reflection). */
  procedures?: readonly Procedure[];
  /** Told of every created intent and status change (metrics). */
  events?: PaymentEvents;
  /** Told of every finished request, on every protocol (metrics). */
  onRequestEnd?: (outcome: RequestOutcome) => void;
  /** Logs and counts every request; one is made from logger and onRequestEnd when absent. */
  observer?: RequestObserver;
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
  /** Most settlement accounts one merchant may register; default 1000. */
  maxSettlementAccounts?: number;
  /** CORS_ALLOWED_ORIGINS; unset: no CORS headers at all. */
  cors?: CorsOptions;
  /** The per-API-key limit; absent, keys are not limited. */
  keyLimit?: { limiter: RateLimiter; limit: RateLimit };
  /** Failed authentications per client address; absent, not throttled. */
  failedAuth?: FailedAuthThrottle;
  /** Longest a streaming response waits for a client to read (WRITE_TIMEOUT_MS); default the listener's default. */
  streamWriteTimeoutMs?: number;
  /** EventService and WebhookEndpointService; absent, their routes and RPCs do not exist. */
  webhooks?: WebhookApiOptions;
  /** TEST_HELPERS=true: serve TestHelperService; absent, its routes and RPCs do not exist. */
  testHelpers?: TestHelpersOptions;
  /** RefundService (over the same processor as options.processor); absent, its routes and RPCs do not exist. */
  refunds?: Pick<RefundParts, "service"> & Partial<Pick<RefundParts, "lateSuccess" | "notices">>;
  /** PROCESSOR_TIMEOUT_MS: the longest one processor call is waited for; default 10 s. */
  processorTimeoutMs?: number;
  /** The one SettleAttempt of the service (the reconciler's too); default: one built over options.intents. */
  settle?: SettleAttempt;
  /** The test processor's 3-D Secure answer, which serves its test page under /checkout (test mode only). */
  testThreeDs?: (idempotencyKey: string, approve: boolean) => string | undefined;
}

/** What the event and webhook endpoint API needs beyond the API's own parts. */
export interface WebhookApiOptions {
  events: EventStore;
  endpoints: WebhookEndpointStore;
  /** Wakes event streams when this process commits an event; absent, they poll only. */
  notifier?: Pick<EventNotifier, "subscribe">;
  /** WEBHOOK_ALLOW_PRIVATE_URLS. */
  allowPrivateUrls: boolean;
  /** Resolves endpoint hosts at registration; default: the system resolver. */
  resolve?: HostResolver;
  /** Most endpoints per merchant; default maxWebhookEndpoints (16). */
  maxEndpointsPerMerchant?: number;
  /** How often a waiting event stream reads the store anyway; default 500 ms. */
  streamPollIntervalMs?: number;
  /** Most open event streams per merchant on this instance; default 10. */
  maxStreamsPerMerchant?: number;
  /** Aborted when the server begins to shut down: open event streams end. */
  closing?: AbortSignal;
  /** Told when RedeliverEvent queued deliveries (wakes the delivery engine). */
  onRedelivered?: () => void;
}

/** What the test helpers need beyond the API's own parts. */
export interface TestHelpersOptions {
  /** Adds the merchants CreateMerchant makes to the key and merchant stores. */
  enrollment: MerchantEnrollment;
  /** TEST_CLOCK=true: the service's clock (also options.clock), which AdvanceClock moves. */
  clock?: AdvanceableClock;
}

export const defaultCheckoutTtlMs = 24 * 60 * 60 * 1000;
export const defaultMaxPaymentAttempts = 3;

/**
 * createApp assembles the service from its parts: services over the given
 * stores, procedures over the services, one pipeline, and the protocols and
 * dispatcher in front. It reads no environment and opens no port, so tests
 * build it with in-memory stores and a fixed clock.
 */
export function createApp(options: AppOptions): NodeHandler {
  const catalogue = createPaymentMethodCatalogue(options.processors);
  const pageTokens = createPageTokenCodec(options.pageTokenSecret);
  const events = options.events ?? ignorePaymentEvents;
  const paymentIntents = createPaymentIntentService({
    intents: options.intents,
    accounts: options.accounts,
    catalogue,
    presenter: createPaymentIntentPresenter({ publicUrl: options.publicUrl, catalogue }),
    pageTokens,
    clock: options.clock,
    ids: options.ids,
    events,
    checkoutTtlMs: options.checkoutTtlMs ?? defaultCheckoutTtlMs,
  });
  const expiry = createPaymentExpiry({ intents: options.intents, clock: options.clock, events });
  const testProcessor = options.processor ? undefined : createTestModeProcessor({ publicUrl: options.publicUrl });
  const processor = options.processor ?? testProcessor!;
  // With the helpers on, the checkout's processor answers a helper's attempt with the outcome it asked for.
  const outcomes = options.testHelpers && createForcedOutcomes(processor);
  const maxAttempts = options.maxPaymentAttempts ?? defaultMaxPaymentAttempts;
  const settle = options.settle ?? createSettleAttempt({
    intents: options.intents,
    lateSuccess: options.refunds?.lateSuccess ?? createLoggingLateSuccessHandler({ logger: options.logger }),
    events,
    clock: options.clock,
    logger: options.logger,
    maxAttempts,
  });
  const checkout = createCheckoutService({
    intents: options.intents,
    merchants: options.merchants ?? { nameOf: async (merchantId) => merchantId },
    processor: outcomes?.processor ?? processor,
    catalogue,
    expiry,
    events,
    settle,
    clock: options.clock,
    ids: options.ids,
    maxAttempts,
    publicUrl: options.publicUrl,
    processorTimeoutMs: options.processorTimeoutMs ?? defaultProcessorTimeoutMs,
  });
  const checkoutRoutes = createCheckoutRoutes({
    checkout,
    csrf: createCsrf({
      secret: options.checkoutSecret ?? randomBytes(32).toString("base64url"),
      secureCookie: options.publicUrl.startsWith("https:"),
    }),
    publicUrl: options.publicUrl,
    logger: options.logger,
    testThreeDs: options.testThreeDs ?? testProcessor?.decide,
  });
  // The processor's own webhook settles through the same SettleAttempt (outside BASE_PATH, beside /checkout).
  const processorWebhooks = createProcessorWebhookRoute({
    processors: { get: (name) => (name === processor.name ? processor : undefined) },
    intents: options.intents,
    settle,
    refunds: options.refunds?.notices ?? createLoggingRefundNoticeHandler(options.logger),
    logger: options.logger,
  });
  const settlementAccounts = createSettlementAccountService({
    accounts: options.accounts,
    pageTokens,
    maxPerMerchant: options.maxSettlementAccounts,
    clock: options.clock,
    ids: options.ids,
  });

  const apiProcedures = [...createPaymentIntentProcedures(paymentIntents), ...createSettlementAccountProcedures(settlementAccounts)];
  if (options.webhooks) apiProcedures.push(...webhookProcedures(options.webhooks, options, pageTokens));
  if (options.refunds) apiProcedures.push(...createRefundProcedures(options.refunds.service(pageTokens)));
  if (options.testHelpers && outcomes) {
    const helpers = createTestHelperService({
      intents: options.intents,
      paymentIntents,
      checkout,
      outcomes,
      expiry,
      enrollment: options.testHelpers.enrollment,
      clock: options.clock,
      ids: options.ids,
      testClock: options.testHelpers.clock,
    });
    apiProcedures.push(...createTestHelperProcedures(helpers));
  }
  const procedures = [...apiProcedures, ...(options.procedures ?? [])];
  const pipeline = createPipeline({
    verifier: options.verifier,
    logger: options.logger,
    keyLimit: options.keyLimit,
    failedAuth: options.failedAuth,
  });
  // REST routes for exactly the RPCs served: the test helpers' only when on, the clock's only with TEST_CLOCK.
  const served = new Set(apiProcedures.map((procedure) => procedure.method));
  const restRoutes = createRouteTable([PaymentIntentService, SettlementAccountService, EventService, WebhookEndpointService, TestHelperService, RefundService], (method) => served.has(method));
  const openApi = openApiRoutes(options.basePath, options.publicUrl);
  return createDispatcher({
    procedures,
    httpRoutes: [...(options.httpRoutes ?? []), ...checkoutRoutes, processorWebhooks, ...openApi],
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
    rpc: createRpcServer({ pipeline, maxMessageBytes: options.maxBodyBytes, streamWriteTimeoutMs: options.streamWriteTimeoutMs ?? defaultListenLimits.writeTimeoutMs }),
    pipeline,
    basePath: options.basePath,
    observer: options.observer ?? createRequestObserver({ logger: options.logger, onRequestEnd: options.onRequestEnd }),
    logger: options.logger,
    cors: options.cors && createCors(options.cors),
    publicPaths: [`${options.basePath}/openapi.json`],
  });
}

/** The procedures of EventService and WebhookEndpointService over the given stores. */
function webhookProcedures(webhooks: WebhookApiOptions, options: AppOptions, pageTokens: PageTokenCodec): Procedure[] {
  const { events, endpoints } = webhooks;
  return [
    ...createEventProcedures(
      createEventService({ events, endpoints, pageTokens, clock: options.clock, ids: options.ids, onRedelivered: webhooks.onRedelivered }),
      createEventStreams({
        events,
        notifier: webhooks.notifier,
        pollIntervalMs: webhooks.streamPollIntervalMs,
        maxPerMerchant: webhooks.maxStreamsPerMerchant,
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
        maxPerMerchant: webhooks.maxEndpointsPerMerchant,
      }),
    ),
  ];
}

/** The REST API's OpenAPI document and docs page, under the API's own base path; its server URL is PUBLIC_URL + BASE_PATH. */
function openApiRoutes(basePath: string, publicUrl: string): HttpRoute[] {
  return createOpenApiRoutes({ basePath, document: createOpenApiDocument({ basePath, publicUrl }) });
}
