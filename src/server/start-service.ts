import { randomBytes } from "node:crypto";
import { EventSchema } from "../../gen/payments/v2/events_pb.js";
import { TestHelperService } from "../../gen/payments/v2/test_helpers_pb.js";
import type { Config } from "../config.js";
import type { NodeHandler } from "../http/node-http.js";
import { createAdvanceableClock } from "../lib/advanceable-clock.js";
import { createSystemClock, type Clock } from "../lib/clock.js";
import { createIdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import { createLimiters } from "../limits/create-limiters.js";
import { createMetricsRoute } from "../observability/metrics-route.js";
import { registerReadinessMetrics } from "../observability/readiness-metrics.js";
import { createRequestObserver } from "../observability/request-observer.js";
import { createServiceMetrics } from "../observability/service-metrics.js";
import { createRestEncoders } from "../protocols/rest/encode-json.js";
import { createTestMerchant, type TestMerchant } from "../sandbox/create-test-merchant.js";
import { logTestHelpers } from "../sandbox/log-test-helpers.js";
import { createEventNotifier, type EventNotifier } from "../service/event-notifier.js";
import { createEventOutbox } from "../service/event-outbox.js";
import type { PaymentEvents } from "../service/payment-events.js";
import { createEventRetention } from "../service/event-retention.js";
import { createPaymentExpiry } from "../service/payment-expiry.js";
import { createPaymentIntentPresenter, type PaymentIntentPresenter } from "../service/payment-intent-presenter.js";
import { createPaymentMethodCatalogue } from "../service/payment-method-catalogue.js";
import type { EventStore } from "../store/event-store.js";
import type { WebhookEndpointStore } from "../store/webhook-endpoint-store.js";
import { createDeliveryEngine } from "../webhooks/delivery-engine.js";
import { createRetryPolicy } from "../webhooks/retry-policy.js";
import { createWebhookSender } from "../webhooks/webhook-sender.js";
import { createApp } from "./create-app.js";
import { listen, type ListeningServer } from "../listener/listen.js";
import { instrumentStores, openStores } from "./open-stores.js";
import { createOperations } from "./operations.js";
import { startPeriodicSweep } from "./periodic-sweep.js";
import { createReadiness, type Readiness } from "../observability/readiness.js";
import { createTestModeProcessor } from "../processor/test-mode-processor.js";
import { createRefundParts } from "./refund-parts.js";
import { createAttemptReconciler } from "../service/attempt-reconciler.js";
import { createSettleAttempt } from "../service/attempt-settler.js";

export interface StartServiceOptions {
  logger: Logger;
  /** Collect process-wide metrics (CPU, memory, GC): on for a server process, off for one of several in a process. */
  processMetrics: boolean;
  /** The service's clock; the system clock by default. With TEST_CLOCK=true, the test clock starts from it. */
  clock?: Clock;
  /** false: no demo merchant when API_KEYS is unset (the ./testing entry makes its own merchant). Default true. */
  demoKey?: boolean;
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
  /** Events, webhook endpoints and the wake-ups of event streams (README, Webhooks). */
  readonly webhooks: RunningWebhooks;
  /**
   * Stops background work and closes the stores: after the listener closed
   * (a graceful shutdown), or at once (tests).
   */
  closeStores(): Promise<void>;
}

/** RunningWebhooks: the service's events and endpoints, for the event and endpoint API and in-process callers. */
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
 * startService builds and starts everything a configuration describes: the
 * stores, limits, background sweeps, the app and the one-port listener. It
 * reads no environment: main.ts passes the configuration in, and so can a
 * test suite's sandbox, several times in one process.
 */
export async function startService(config: Config, options: StartServiceOptions): Promise<RunningService> {
  const { logger } = options;
  const metrics = createServiceMetrics({ processMetrics: options.processMetrics });
  const helpersConfig = config.testHelpers;
  // TEST_CLOCK: every part of the service reads the one clock the helpers move.
  const testClock = helpersConfig.clock ? createAdvanceableClock(options.clock ?? createSystemClock()) : undefined;
  const clock = testClock ?? options.clock ?? createSystemClock();
  const ids = createIdGenerator(clock);
  const catalogue = createPaymentMethodCatalogue(config.processors);
  // Events render the intent's checkoutLink; with PORT=0 the link's port is known once listening (see withBoundPort).
  let presenter = createPaymentIntentPresenter({ publicUrl: config.publicUrl, catalogue });
  const eventPresenter: PaymentIntentPresenter = {
    toMessage: (record, now) => presenter.toMessage(record, now),
    toListItem: (record, account, now) => presenter.toListItem(record, account, now),
  };
  const notifier = createEventNotifier({ onListenerError: (error) => logger.error({ err: error }, "an event stream failed on a new event") });
  // Until the engine exists a commit wakes nothing: engine.start() claims whatever is due by then.
  let wakeDelivery = () => {};
  const outbox = createEventOutbox({
    presenter: eventPresenter,
    ids,
    encodeJson: createRestEncoders().encoderFor(EventSchema),
    onCommitted: (events) => {
      wakeDelivery();
      notifier.notify(events);
    },
  });
  const stores = instrumentStores(await openStores(config, clock, ids, logger, { demoKey: options.demoKey, outbox }), metrics);
  // Shared through Redis when REDIS_URL is set, else each instance's memory.
  const limiters = await createLimiters(config, { clock, log: logger });
  const rateLimit = config.rateLimit;
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

  // One observer for the API, the checkout and the sweep.
  const paymentEvents: PaymentEvents = metrics.paymentEvents;
  const expiry = createPaymentExpiry({ intents: stores.intents, clock, events: paymentEvents });
  const sweep = startPeriodicSweep({
    run: () => expiry.sweep(),
    // Often enough that an intent is expired within a minute of its deadline.
    intervalMs: Math.min(60_000, config.checkout.ttlMs),
    logger,
    done: (expired) => [{ expired }, "expired lapsed payment intents"],
    failed: "expiry sweep failed",
  });
  // The processor the checkout charges through and refunds go back through.
  const processor = createTestModeProcessor({ latencyMs: config.processor.testLatencyMs, publicUrl: config.publicUrl });
  const processorTimeoutMs = config.processor.timeoutMs;
  const refundParts = createRefundParts({ refunds: stores.refunds, intents: stores.intents, processor, clock, ids, logger, processorTimeoutMs });
  // The one SettleAttempt of this instance: the checkout, the return URL and the reconciler commit outcomes through it.
  const settle = createSettleAttempt({
    intents: stores.intents,
    lateSuccess: refundParts.lateSuccess,
    events: paymentEvents,
    clock,
    logger,
    maxAttempts: config.checkout.maxAttempts,
  });
  const reconcilables = [
    createAttemptReconciler({
      intents: stores.intents,
      processors: { get: (name) => (name === processor.name ? processor : undefined) },
      settle,
      logger,
      processorTimeoutMs,
      alarmAfterMs: config.processor.alarmAfterMs,
      onAlarm: () => metrics.recordProcessingAlarm(),
    }),
    refundParts.reconciler,
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
  const engine = createDeliveryEngine({
    queue: stores.deliveryQueue,
    sender: createWebhookSender({ timeoutMs: webhookConfig.timeoutMs, allowPrivate: webhookConfig.allowPrivateUrls }),
    policy: createRetryPolicy({ schedule: webhookConfig.retrySchedule }),
    // Due times follow the service's clock (the test clock moves retries); webhook-timestamp stays real time (the default signing clock).
    clock,
    logger,
    metrics: metrics.webhooks,
    concurrency: webhookConfig.concurrency,
    perEndpointConcurrency: webhookConfig.concurrencyPerEndpoint,
    pollIntervalMs: webhookConfig.pollIntervalMs,
    graceMs: config.shutdown.graceMs,
  });
  wakeDelivery = () => engine.wake();
  // After the test clock jumps, intents that lapsed expire now and retries that fell due go out now, not at the next tick.
  const stopWaking = testClock?.onAdvance(() => {
    sweep.wake();
    retentionSweep.wake();
    reconcileSweep.wake();
    engine.wake();
  });
  const closing = new AbortController();
  let stopped: Promise<void> | undefined;
  /**
   * Stops background work once: the sweep, event streams, and the delivery
   * engine, whose attempts in flight get the shutdown grace while requests in
   * flight get theirs, so the two share one SHUTDOWN_GRACE_MS.
   */
  const stopBackground = () => {
    stopped ??= (async () => {
      closing.abort();
      stopWaking?.();
      sweep.stop();
      retentionSweep.stop();
      reconcileSweep.stop();
      await engine.stop();
    })();
    return stopped;
  };
  const closeStores = async () => {
    // The engine completes its last attempts in the stores, so it stops first.
    await stopBackground();
    await Promise.all([stores.close(), limiters.close()]);
  };

  // Bound before the app is built, so a PUBLIC_URL with port 0 (PORT=0 without
  // PUBLIC_URL) can take the port the listener got; the app is in place
  // before the first request can be read.
  let handler: NodeHandler = (_req, res) => {
    res.writeHead(503);
    res.end();
  };
  const observer = createRequestObserver({ logger, onRequestEnd: metrics.recordRequest });
  let server: ListeningServer;
  try {
    server = await listen((req, res) => handler(req, res), {
      host: config.host,
      port: config.port,
      limits: config.limits,
      // A stream reset that the handler saw is logged by the request observer already.
      onRefused: (event) => {
        if (event.http2ErrorCode === undefined) observer.refused(event);
      },
      onConnectionDropped: (event) => metrics.recordDroppedConnection(event.reason),
    });
  } catch (error) {
    await closeStores();
    throw error;
  }
  presenter = createPaymentIntentPresenter({ publicUrl: withBoundPort(config.publicUrl, server.port), catalogue });
  handler = createApp({
    observer,
    intents: stores.intents,
    accounts: stores.accounts,
    verifier: stores.verifier,
    keyLimit: rateLimit && limiters.apiKeys && { limiter: limiters.apiKeys, limit: rateLimit },
    failedAuth: limiters.failedAuth,
    clock,
    ids,
    logger,
    publicUrl: withBoundPort(config.publicUrl, server.port),
    basePath: config.basePath,
    processors: config.processors,
    pageTokenSecret: config.pageTokenSecret ?? randomBytes(32).toString("base64url"),
    maxBodyBytes: config.maxBodyBytes,
    streamWriteTimeoutMs: config.limits.writeTimeoutMs,
    httpRoutes: [...operations.httpRoutes, createMetricsRoute({ registry: metrics.registry, token: config.metricsToken })],
    onRequestEnd: metrics.recordRequest,
    procedures: operations.procedures,
    merchants: stores.merchants,
    checkoutTtlMs: config.checkout.ttlMs,
    maxPaymentAttempts: config.checkout.maxAttempts,
    checkoutSecret: config.checkout.secret,
    cors: config.corsAllowedOrigins && { allowedOrigins: config.corsAllowedOrigins },
    events: paymentEvents,
    webhooks: {
      events: stores.events,
      endpoints: stores.endpoints,
      notifier,
      allowPrivateUrls: webhookConfig.allowPrivateUrls,
      closing: closing.signal,
      onRedelivered: () => engine.wake(),
    },
    testHelpers: helpersConfig.enabled ? { enrollment: stores.enrollment, clock: testClock } : undefined,
    processor,
    refunds: refundParts,
    processorTimeoutMs,
    settle,
    testThreeDs: processor.decide,
  });
  logger.info({ url: server.url, basePath: config.basePath, store: stores.kind }, "payment intent service listening");
  if (helpersConfig.enabled) logTestHelpers(logger, config);
  engine.start();
  readiness.started();

  return {
    server: {
      host: server.host,
      port: server.port,
      url: server.url,
      async close(closeOptions) {
        // Streams end and the engine stops claiming as the port closes, not after requests finish.
        void stopBackground();
        await server.close(closeOptions);
      },
    },
    readiness,
    storeKind: stores.kind,
    demoKey: stores.demoKey,
    testHelpers: helpersConfig.enabled ? { createMerchant: (name) => createTestMerchant({ enrollment: stores.enrollment, ids }, name) } : undefined,
    webhooks: { events: stores.events, endpoints: stores.endpoints, notifier, closing: closing.signal, wakeDelivery: () => engine.wake() },
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
