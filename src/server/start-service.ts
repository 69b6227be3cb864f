import { randomBytes } from "node:crypto";
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
import { createTestMerchant, type TestMerchant } from "../sandbox/create-test-merchant.js";
import { logTestHelpers } from "../sandbox/log-test-helpers.js";
import type { PaymentEvents } from "../service/payment-events.js";
import { createPaymentExpiry } from "../service/payment-expiry.js";
import { createApp } from "./create-app.js";
import { startExpirySweep } from "./expiry-sweep.js";
import { listen, type ListeningServer } from "./listen.js";
import { instrumentStores, openStores } from "./open-stores.js";
import { createOperations } from "./operations.js";
import { createReadiness, type Readiness } from "./readiness.js";

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
  /**
   * Stops background work and closes the stores: after the listener closed
   * (a graceful shutdown), or at once (tests).
   */
  closeStores(): Promise<void>;
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
  const stores = instrumentStores(await openStores(config, clock, ids, logger, { demoKey: options.demoKey }), metrics);
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
  const sweep = startExpirySweep({
    expiry: createPaymentExpiry({ intents: stores.intents, clock, events: paymentEvents }),
    // Often enough that an intent is expired within a minute of its deadline.
    intervalMs: Math.min(60_000, config.checkout.ttlMs),
    logger,
  });
  // After the test clock jumps, intents that lapsed expire now, not at the next tick.
  const stopWaking = testClock?.onAdvance(() => sweep.wake());
  const closeStores = async () => {
    stopWaking?.();
    sweep.stop();
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
    httpRoutes: [...operations.httpRoutes, createMetricsRoute({ registry: metrics.registry, token: config.metricsToken })],
    onRequestEnd: metrics.recordRequest,
    procedures: operations.procedures,
    merchants: stores.merchants,
    checkoutTtlMs: config.checkout.ttlMs,
    maxPaymentAttempts: config.checkout.maxAttempts,
    checkoutSecret: config.checkout.secret,
    cors: config.corsAllowedOrigins && { allowedOrigins: config.corsAllowedOrigins },
    events: paymentEvents,
    testHelpers: helpersConfig.enabled ? { enrollment: stores.enrollment, clock: testClock } : undefined,
  });
  logger.info({ url: server.url, basePath: config.basePath, store: stores.kind }, "payment intent service listening");
  if (helpersConfig.enabled) logTestHelpers(logger, config);
  readiness.started();

  return {
    server,
    readiness,
    storeKind: stores.kind,
    demoKey: stores.demoKey,
    testHelpers: helpersConfig.enabled ? { createMerchant: (name) => createTestMerchant({ enrollment: stores.enrollment, ids }, name) } : undefined,
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
