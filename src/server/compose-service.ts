import { randomBytes } from "node:crypto";
import { EventSchema } from "../../gen/payments/v2/events_pb.js";
import { TestHelperService } from "../../gen/payments/v2/test_helpers_pb.js";
import type { Config } from "../config.js";
import type { HttpRoute } from "../http/http-route.js";
import { createAdvanceableClock } from "../lib/advanceable-clock.js";
import { createSystemClock, type Clock } from "../lib/clock.js";
import { createIdGenerator, type IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { LogLevel } from "../observability/log-level.js";
import { createLimiters } from "../limits/create-limiters.js";
import { openListener, type ListeningServer } from "../listener/listen.js";
import { createMetricsRoute } from "../observability/metrics-route.js";
import { createReadiness, type Readiness } from "../observability/readiness.js";
import { registerReadinessMetrics } from "../observability/readiness-metrics.js";
import { createRequestObserver, type RequestOutcome } from "../observability/request-observer.js";
import { createServiceMetrics, type ServiceMetrics } from "../observability/service-metrics.js";
import type { PaymentProcessor } from "../processor/payment-processor.js";
import { createPaystackProcessor } from "../processor/paystack/paystack-processor.js";
import { createProcessorRegistry } from "../processor/processor-registry.js";
import { createTestModeProcessor, testWebhookKey } from "../processor/test-mode-processor.js";
import { createAttemptReconciler } from "../service/attempt-reconciler.js";
import { createSettleAttempt } from "../service/attempt-settler.js";
import { createRestEncoders } from "../protocols/rest/encode-json.js";
import { createTestMerchant, type TestMerchant } from "../sandbox/create-test-merchant.js";
import { logTestHelpers } from "../sandbox/log-test-helpers.js";
import { createMerchantCreationLimits, defaultMerchantCreationRate } from "../sandbox/merchant-creation-limits.js";
import { createEventNotifier, type EventNotifier } from "../service/event-notifier.js";
import { createEventOutbox } from "../service/event-outbox.js";
import { createEventRetention } from "../service/event-retention.js";
import { createPaymentExpiry } from "../service/payment-expiry.js";
import { createPaymentIntentPresenter } from "../service/payment-intent-presenter.js";
import { createPaymentMethodCatalogue } from "../service/payment-method-catalogue.js";
import type { EventStore } from "../store/event-store.js";
import type { WebhookEndpointStore } from "../store/webhook-endpoint-store.js";
import type { HostResolver } from "../webhooks/host-resolver.js";
import { createDeliveryEngine, type DeliveryEngine } from "../webhooks/delivery-engine.js";
import { createThreadedDeliveryEngine, deliveryWorkerPoolMax } from "../webhooks/threaded-delivery-engine.js";
import { isMemoryDeliveryQueue } from "../webhooks/queue-replica.js";
import { createRetryPolicy } from "../webhooks/retry-policy.js";
import { createWebhookSender, type WebhookSender } from "../webhooks/webhook-sender.js";
import { createApp, type AppCaps } from "./create-app.js";
import { instrumentStores, openStores, type Stores } from "./open-stores.js";
import { createOperations } from "./operations.js";
import { startPeriodicSweep } from "./periodic-sweep.js";
import { createRefundParts, type RefundParts } from "./refund-parts.js";

/**
 * ServiceOverrides are what a test injects into the one composition: the
 * things that stand for the world outside the process (time, ids, the log,
 * the processor, DNS, the webhook receivers) and faults a test provokes. A
 * setting never goes here: it goes through Config, as in production.
 */
export interface ServiceOverrides {
  /** Where the log goes; a server process writes through pino. */
  logger: Logger;
  /** Collect process-wide metrics (CPU, memory, GC): on for a server process, off for one of several in a process. */
  processMetrics?: boolean;
  /** false: no demo merchant when API_KEYS is unset (the ./testing entry makes its own merchant). Default true. */
  demoKey?: boolean;
  /** The service's clock; the system clock by default. With TEST_CLOCK=true, the test clock starts from it. */
  clock?: Clock;
  /** Ids of everything the service creates; by default made on the service's clock. */
  ids?: IdGenerator;
  /** The processor of card, bank transfer, USSD and PAYMENT_PROCESSORS names; default the test-mode processor. Paystack stays as configured. */
  processor?: PaymentProcessor;
  /** The longest one refund call to the processor takes; default 10 s. */
  processorTimeoutMs?: number;
  /** Resolves webhook endpoint hosts, at registration and at delivery; default the system resolver. */
  resolve?: HostResolver;
  /** Sends webhook deliveries; default the HTTP sender of WEBHOOK_TIMEOUT_MS. */
  webhookSender?: WebhookSender;
  /**
   * A server process (serve) sets this: with WEBHOOK_WORKER_THREAD (default
   * on), delivery runs on a worker thread that logs to standard error at this
   * level. Unset (tests), or when a test injects the sender, the resolver or
   * a clock, or with the test clock, the engine runs on the main thread with
   * what was injected (a worker can share none of it).
   */
  deliveryThreadLog?: { level: LogLevel; pretty: boolean };
  /** Wraps the stores as opened: a test's failing or switchable store, a counting verifier. */
  wrapStores?(stores: Stores): Stores;
  /** Plain HTTP routes served beside the service's own (a test's slow or failing page). */
  httpRoutes?: readonly HttpRoute[];
  /** Per-merchant caps and polling intervals a test shrinks. */
  caps?: AppCaps;
  /** Told of every finished request, after the metrics (a test counting what an instance answered). */
  onRequestEnd?: (outcome: RequestOutcome) => void;
}

/** RunningService is the whole service, listening. */
export interface RunningService {
  readonly server: ListeningServer;
  readonly readiness: Readiness;
  /** "memory" or "postgres". */
  readonly storeKind: string;
  /** Set when this start created a demo merchant (no API_KEYS and no key stored). */
  readonly demoKey: string | undefined;
  /** The test helpers' in-process face, when TEST_HELPERS=true: what the ./testing entry bootstraps with. */
  readonly testHelpers: RunningTestHelpers | undefined;
  /** The stores the service runs on, as it uses them (instrumented and wrapped). */
  readonly stores: Stores;
  /** The refund service's parts: the reconciler, the late-success and notice handlers. */
  readonly refunds: RefundParts;
  /** Events, webhook endpoints and the wake-ups of event streams (README, Webhooks). */
  readonly webhooks: RunningWebhooks;
  /** The service's metrics registry and observers (GET /metrics). */
  readonly metrics: ServiceMetrics;
  /** The one clock every part reads (the test clock with TEST_CLOCK=true). */
  readonly clock: Clock;
  /**
   * Stops background work and closes the stores: after the listener closed
   * (a graceful shutdown), or at once (tests).
   */
  closeStores(): Promise<void>;
}

/** RunningWebhooks: the service's events and endpoints, for in-process callers. */
export interface RunningWebhooks {
  events: EventStore;
  endpoints: WebhookEndpointStore;
  /** Told of every event this process commits: StreamEvents subscribes to wake its streams. */
  notifier: EventNotifier;
  /** Aborted when the service begins to stop: open event streams end. */
  closing: AbortSignal;
  /** Makes the delivery engine look for due deliveries now (after RedeliverEvent queued some). */
  wakeDelivery(): void;
}

/** RunningTestHelpers: what a process that started the service may do without a request. */
export interface RunningTestHelpers {
  /** As POST /v2/test-helpers/merchants: a fresh merchant with a working key. */
  createMerchant(name?: string): Promise<TestMerchant>;
}

/**
 * composeService is the one composition root: main (`npm start`), the
 * installed `payment-intents serve`, the ./testing entry and the test suites
 * all start the service through it. It builds, in this order and each once,
 * the port (bound first, so that PORT=0 has its URL before checkout links are
 * rendered), the stores with their event outbox, the limits and readiness,
 * the background engines (expiry, refund reconciliation, event retention,
 * webhook delivery), the app, and attaches the app to the port. It reads no
 * environment.
 */
export async function composeService(config: Config, overrides: ServiceOverrides): Promise<RunningService> {
  const { logger } = overrides;
  const metrics = createServiceMetrics({ processMetrics: overrides.processMetrics ?? false });
  const helpersConfig = config.testHelpers;
  // TEST_CLOCK: every part of the service reads the one clock the helpers move.
  const realClock = overrides.clock ?? createSystemClock();
  const testClock = helpersConfig.clock ? createAdvanceableClock(realClock) : undefined;
  const clock = testClock ?? realClock;
  const ids = overrides.ids ?? createIdGenerator(clock);
  const { onRequestEnd } = overrides;
  const observer = createRequestObserver({
    logger,
    onRequestEnd: onRequestEnd ? (outcome) => (metrics.recordRequest(outcome), onRequestEnd(outcome)) : metrics.recordRequest,
  });

  const listener = await openListener({
    host: config.host,
    port: config.port,
    limits: config.limits,
    trustedProxies: config.trustedProxies,
    // A stream reset that the handler saw is logged by the request observer already.
    onRefused: (event) => {
      if (event.http2ErrorCode === undefined) observer.refused(event);
    },
    onConnectionDropped: (event) => metrics.recordDroppedConnection(event.reason),
  });
  const publicUrl = withBoundPort(config.publicUrl, listener.port);
  const catalogue = createPaymentMethodCatalogue(config.processors);
  const presenter = createPaymentIntentPresenter({ publicUrl, catalogue });
  // Streams and the delivery engine subscribe; the outbox tells it of each commit.
  const notifier = createEventNotifier({ onListenerError: (error) => logger.error({ err: error }, "an event stream failed on a new event") });
  const outbox = createEventOutbox({
    presenter,
    ids,
    encodeJson: createRestEncoders().encoderFor(EventSchema),
    onCommitted: (events, deliveries) => notifier.notify(events, deliveries),
  });
  let opened: Stores;
  try {
    opened = await openStores(config, clock, ids, logger, { demoKey: overrides.demoKey, outbox });
  } catch (error) {
    await listener.close();
    throw error;
  }
  const stores = instrumentStores(overrides.wrapStores ? overrides.wrapStores(opened) : opened, metrics);
  // Shared through Redis when REDIS_URL is set, else each instance's memory.
  // Limits run on real time: moving the test clock must not refill anyone's budget.
  const limiters = await createLimiters(config, { clock: realClock, log: logger });
  const readiness = createReadiness({
    store: stores.health,
    unreachableGraceMs: config.database?.unreadyAfterMs,
    starting: true,
    details: {
      ...(stores.settings && { databaseSettings: () => stores.settings }),
      rateLimits: () => limiters.describe(),
      testHelpers: () => helpersConfig.enabled,
      testClock: () => helpersConfig.clock,
    },
    onChange: (state) =>
      state.ready ? logger.info({ readiness: state.detail.state }, "ready") : logger.error({ readiness: state.detail.state }, `not ready: ${state.reason}`),
  });
  const operations = createOperations(readiness, {
    extraServices: helpersConfig.enabled ? [TestHelperService] : [],
    detailToken: config.metricsToken,
  });
  registerReadinessMetrics(metrics.registry, readiness);

  // The background work: each engine once, on the service's clock.
  const closing = new AbortController();
  const expiry = createPaymentExpiry({ intents: stores.intents, clock, events: metrics.paymentEvents });
  const sweep = startPeriodicSweep({
    run: () => expiry.sweep(),
    // Often enough that an intent is expired within a minute of its deadline.
    intervalMs: Math.min(60_000, config.checkout.ttlMs),
    logger,
    done: (expired) => [{ expired }, "expired lapsed payment intents"],
    failed: "expiry sweep failed",
  });
  // The processors, in one registry: a new attempt goes to the processor of its
  // payment method (paystack to Paystack when PAYSTACK_SECRET_KEY is set; card,
  // bank transfer, USSD and PAYMENT_PROCESSORS names to the test-mode
  // processor); status checks, processor webhooks and refunds to the attempt's own.
  // The test processor's webhooks go to PUBLIC_URL, so every instance verifies them with a key derived from the CHECKOUT_SECRET they share.
  const processorTimeoutMs = overrides.processorTimeoutMs ?? config.processor.timeoutMs;
  const testProcessor = overrides.processor
    ? undefined
    : createTestModeProcessor({
        latencyMs: config.processor.testLatencyMs,
        publicUrl,
        webhookDelayMs: config.processor.testWebhookDelayMs,
        webhookKey: config.checkout.secret === undefined ? undefined : testWebhookKey(config.checkout.secret),
        journalPath: config.processor.testJournal,
      });
  // Paystack's refund look-back is in Paystack's time, so it reads real time even under TEST_CLOCK.
  const paystack = config.paystack && createPaystackProcessor({ ...config.paystack, timeoutMs: processorTimeoutMs, clock: realClock, logger });
  const processors = createProcessorRegistry([...(paystack ? [paystack] : []), overrides.processor ?? testProcessor!]);
  const refunds = createRefundParts({ refunds: stores.refunds, intents: stores.intents, processors, clock, ids, logger, processorTimeoutMs });
  // The one SettleAttempt of this instance: the checkout, the return URL, the processor's webhook and the reconciler commit outcomes through it.
  const settle = createSettleAttempt({
    intents: stores.intents,
    lateSuccess: refunds.lateSuccess,
    events: metrics.paymentEvents,
    clock,
    logger,
    maxAttempts: config.checkout.maxAttempts,
  });
  const reconcilables = [
    createAttemptReconciler({
      intents: stores.intents,
      processors,
      settle,
      logger,
      processorTimeoutMs,
      alarmAfterMs: config.processor.alarmAfterMs,
      onAlarm: () => metrics.recordProcessingAlarm(),
    }),
    refunds.reconciler,
  ];
  // One loop reconciles what the processor has not told us yet: open attempts, then pending refunds.
  const reconcileSweep = startPeriodicSweep({
    run: async () => {
      let settled = 0;
      for (const work of reconcilables) settled += await work.runOnce(clock.now(), closing.signal);
      return settled;
    },
    intervalMs: config.processor.reconcileIntervalMs,
    logger,
    done: (settled) => [{ settled }, "reconciled open payment attempts and pending refunds"],
    failed: "reconciliation failed",
  });
  const retention = createEventRetention({ events: stores.events, clock, retentionDays: config.webhooks.eventRetentionDays });
  const retentionSweep = startPeriodicSweep({
    run: () => retention.sweep(),
    intervalMs: 3_600_000,
    logger,
    done: (deleted) => [{ deleted }, "deleted events past their retention"],
    failed: "event retention sweep failed",
  });
  const webhookConfig = config.webhooks;
  const threadLog = overrides.deliveryThreadLog;
  const onThread =
    webhookConfig.workerThread && threadLog && !overrides.webhookSender && !overrides.resolve && !overrides.clock && !testClock;
  // Keep-alive pools of one endpoint's connections: as many as it may have attempts in flight.
  const sender = onThread
    ? undefined
    : (overrides.webhookSender ??
      createWebhookSender({
        timeoutMs: webhookConfig.timeoutMs,
        allowPrivate: webhookConfig.allowPrivateUrls,
        resolve: overrides.resolve,
        connectionsPerEndpoint: webhookConfig.concurrencyPerEndpoint,
      }));
  const engineSettings = {
    concurrency: webhookConfig.concurrency,
    perEndpointConcurrency: webhookConfig.concurrencyPerEndpoint,
    perMerchantConcurrency: webhookConfig.concurrencyPerMerchant,
    pollIntervalMs: webhookConfig.pollIntervalMs,
    graceMs: config.shutdown.graceMs,
  };
  const database = config.database;
  const engine: DeliveryEngine = sender
    ? createDeliveryEngine({
        queue: stores.deliveryQueue,
        sender,
        policy: createRetryPolicy({ schedule: webhookConfig.retrySchedule }),
        // Due times follow the service's clock (the test clock moves retries); webhook-timestamp stays real time (the default signing clock).
        clock,
        logger,
        metrics: metrics.webhooks,
        ...engineSettings,
      })
    : createThreadedDeliveryEngine({
        data: {
          log: threadLog!,
          engine: engineSettings,
          sender: { timeoutMs: webhookConfig.timeoutMs, allowPrivate: webhookConfig.allowPrivateUrls },
          retrySchedule: webhookConfig.retrySchedule,
          // PostgreSQL: a pool of the worker's own, so no delivery goes through this thread.
          database: database && {
            url: database.url,
            poolMax: deliveryWorkerPoolMax(database.poolMax),
            statementTimeoutMs: database.statementTimeoutMs,
            lockTimeoutMs: database.lockTimeoutMs,
            preparedStatements: stores.settings?.preparedStatements.usable ?? false,
            secretKey: webhookConfig.secretKey,
          },
        },
        queue: database || !isMemoryDeliveryQueue(stores.deliveryQueue) ? undefined : stores.deliveryQueue,
        metrics: metrics.webhooks,
        logger,
      });
  // A commit makes its deliveries due now: the engine looks at once instead of at its next poll.
  // One that wrote none (no endpoint takes its events) made nothing due: no wake-up, no claim.
  const stopWakingOnCommit = notifier.subscribeAll((_, deliveries) => deliveries !== 0 && engine.wake());
  // After the test clock jumps, intents that lapsed expire now and retries that fell due go out now, not at the next tick.
  const stopWakingOnAdvance = testClock?.onAdvance(() => {
    sweep.wake();
    retentionSweep.wake();
    reconcileSweep.wake();
    engine.wake();
  });
  let stopped: Promise<void> | undefined;
  /**
   * Stops background work once: the sweeps, event streams, and the delivery
   * engine, whose attempts in flight get the shutdown grace while requests in
   * flight get theirs, so the two share one SHUTDOWN_GRACE_MS.
   */
  const stopBackground = () => {
    stopped ??= (async () => {
      closing.abort();
      stopWakingOnCommit();
      stopWakingOnAdvance?.();
      sweep.stop();
      retentionSweep.stop();
      reconcileSweep.stop();
      testProcessor?.close();
      await engine.stop();
      await sender?.close();
    })();
    return stopped;
  };
  const closeStores = async () => {
    // The engine completes its last attempts in the stores, so it stops first.
    await stopBackground();
    await Promise.all([stores.close(), limiters.close()]);
  };

  listener.serve(
    createApp({
      observer,
      stores,
      catalogue,
      presenter,
      expiry,
      processors,
      // The one live processor this service has an adapter for (issue 23, §1).
      liveSetting: "PAYSTACK_SECRET_KEY to a live secret key (sk_live_…)",
      refunds,
      processorTimeoutMs,
      settle,
      testThreeDs: testProcessor?.decide,
      keyLimit: config.rateLimit && limiters.apiKeys && { limiter: limiters.apiKeys, limit: config.rateLimit },
      failedAuth: limiters.failedAuth,
      clock,
      ids,
      logger,
      publicUrl,
      basePath: config.basePath,
      pageTokenSecret: config.pageTokenSecret ?? randomBytes(32).toString("base64url"),
      maxBodyBytes: config.maxBodyBytes,
      streamWriteTimeoutMs: config.limits.writeTimeoutMs,
      httpRoutes: [...operations.httpRoutes, createMetricsRoute({ registry: metrics.registry, token: config.metricsToken }), ...(overrides.httpRoutes ?? [])],
      procedures: operations.procedures,
      checkoutTtlMs: config.checkout.ttlMs,
      maxPaymentAttempts: config.checkout.maxAttempts,
      checkoutSecret: config.checkout.secret,
      cors: config.corsAllowedOrigins && { allowedOrigins: config.corsAllowedOrigins },
      events: metrics.paymentEvents,
      webhooks: {
        notifier,
        allowPrivateUrls: webhookConfig.allowPrivateUrls,
        resolve: overrides.resolve,
        closing: closing.signal,
        onRedelivered: () => engine.wake(),
      },
      testHelpers: helpersConfig.enabled
        ? {
            clock: testClock,
            merchantCreation: createMerchantCreationLimits({
              maxMerchants: helpersConfig.maxMerchants,
              perAddress: defaultMerchantCreationRate,
              clock: realClock,
            }),
          }
        : undefined,
      caps: overrides.caps,
    }),
  );
  logger.info({ url: listener.url, basePath: config.basePath, store: stores.kind }, "payment intent service listening");
  if (helpersConfig.enabled) logTestHelpers(logger, config);
  engine.start();
  readiness.started();

  return {
    server: {
      host: listener.host,
      port: listener.port,
      url: listener.url,
      async close(closeOptions) {
        // Streams end and the engine stops claiming as the port closes, not after requests finish.
        void stopBackground();
        await listener.close(closeOptions);
      },
    },
    readiness,
    storeKind: stores.kind,
    demoKey: stores.demoKey,
    testHelpers: helpersConfig.enabled ? { createMerchant: (name) => createTestMerchant({ enrollment: stores.enrollment, ids }, name) } : undefined,
    stores,
    refunds,
    webhooks: { events: stores.events, endpoints: stores.endpoints, notifier, closing: closing.signal, wakeDelivery: () => engine.wake() },
    metrics,
    clock,
    closeStores,
  };
}

/** withBoundPort fills in the port of a URL that names port 0, which no customer could reach. */
function withBoundPort(publicUrl: string, port: number): string {
  const url = new URL(publicUrl);
  if (url.port !== "0") return publicUrl;
  url.port = String(port);
  return url.origin;
}
