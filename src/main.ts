import { randomBytes } from "node:crypto";
import type { ApiKeyVerifier } from "./auth/api-key-verifier.js";
import { createMemoryApiKeyVerifier } from "./auth/memory-api-key-verifier.js";
import { createRateLimitedVerifier } from "./auth/rate-limited-verifier.js";
import { ConfigError, readConfig, type Config } from "./config.js";
import { createSystemClock, type Clock } from "./lib/clock.js";
import { createIdGenerator, type IdGenerator } from "./lib/ids.js";
import type { Logger } from "./lib/logger.js";
import { instrumentStore } from "./observability/instrument-store.js";
import { createMetricsRoute } from "./observability/metrics-route.js";
import { createPinoLogger } from "./observability/pino-logger.js";
import { createServiceMetrics, type ServiceMetrics } from "./observability/service-metrics.js";
import { createRateLimiter } from "./lib/rate-limiter.js";
import { createApp } from "./server/create-app.js";
import { listen } from "./server/listen.js";
import { createOperations } from "./server/operations.js";
import { createReadiness } from "./server/readiness.js";
import { createShutdown } from "./server/shutdown.js";
import { createMemoryPaymentIntentStore } from "./store/memory/memory-payment-intent-store.js";
import { createMemorySettlementAccountStore } from "./store/memory/memory-settlement-account-store.js";
import { createMemoryStoreHealth } from "./store/memory/memory-store-health.js";
import type { PaymentIntentStore } from "./store/payment-intent-store.js";
import { openPostgresStores } from "./store/postgres/open-postgres-stores.js";
import type { SettlementAccountStore } from "./store/settlement-account-store.js";
import { createMemoryMerchantDirectory, type MerchantDirectory } from "./store/merchant-directory.js";
import { startExpirySweep } from "./server/expiry-sweep.js";
import type { PaymentEvents } from "./service/payment-events.js";
import { createPaymentExpiry } from "./service/payment-expiry.js";
import type { StoreHealth } from "./store/store-health.js";

/** A demo key is a credential: shown once on the terminal, never logged. */
const newDemoKey = () => `sk_test_${randomBytes(24).toString("base64url")}`;

interface Stores {
  kind: "memory" | "postgres";
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
  verifier: ApiKeyVerifier;
  /** Whether the stores can serve now: behind /readyz and gRPC health. */
  health: StoreHealth;
  /** Merchant names for the checkout page. */
  merchants: MerchantDirectory;
  /** Set when this start created a demo merchant's key. */
  demoKey?: string;
  close(): Promise<void>;
}

/** openStores makes the one choice of implementations: PostgreSQL when DATABASE_URL is set. */
async function openStores(config: Config, clock: Clock, ids: IdGenerator, logger: Logger): Promise<Stores> {
  if (!config.database) {
    const demoKey = config.apiKeys ? undefined : newDemoKey();
    const keys = config.apiKeys ?? [{ merchantId: "demo", key: demoKey! }];
    return {
      kind: "memory",
      intents: createMemoryPaymentIntentStore(),
      accounts: createMemorySettlementAccountStore(),
      verifier: createMemoryApiKeyVerifier(keys.map((k) => ({ ...k, merchantName: k.merchantId }))),
      merchants: createMemoryMerchantDirectory(keys.map((k) => ({ merchantId: k.merchantId, merchantName: k.merchantId }))),
      demoKey,
      health: createMemoryStoreHealth(),
      close: async () => {},
    };
  }

  const db = config.database;
  const stores = await openPostgresStores({
    ...db,
    migrate: db.migrateOnStart,
    clock,
    ids,
    log: (message) => logger.info({ component: "database" }, message),
  });
  if (stores.applied.length > 0) logger.info({ migrations: stores.applied }, "database migrations applied");
  let demoKey: string | undefined;
  if (config.apiKeys) {
    // API_KEYS from the environment are upserted: only their hashes are stored.
    for (const { merchantId, key } of config.apiKeys) await stores.apiKeys.addKey(merchantId, key);
  } else if ((await stores.apiKeys.countActiveKeys()) === 0) {
    demoKey = newDemoKey();
    await stores.apiKeys.addKey("demo", demoKey);
  }
  return { kind: "postgres", ...stores, verifier: stores.apiKeys, demoKey };
}

/**
 * instrumentStores times every call to the stores the service uses
 * (payments_store_call_duration_seconds); the implementations never know.
 */
function instrumentStores(stores: Stores, metrics: ServiceMetrics): Stores {
  return {
    ...stores,
    intents: instrumentStore(stores.intents, "payment_intents", metrics),
    accounts: instrumentStore(stores.accounts, "settlement_accounts", metrics),
    verifier: instrumentStore(stores.verifier, "api_keys", metrics),
    merchants: instrumentStore(stores.merchants, "merchants", metrics),
  };
}

/**
 * The entry point: the only place that reads the environment and chooses
 * implementations.
 */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = readConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }

  // Pretty lines for a person at a terminal, JSON lines for a log collector.
  const logger = createPinoLogger({ level: config.logLevel, pretty: process.stderr.isTTY });
  const metrics = createServiceMetrics({ processMetrics: true });
  const clock = createSystemClock();
  const ids = createIdGenerator(clock);
  const stores = instrumentStores(await openStores(config, clock, ids, logger), metrics);
  const readiness = createReadiness({
    store: stores.health,
    clock,
    // A store that cannot answer `select 1` in 2 s is not one to send traffic to.
    timeoutMs: 2000,
    onStoreFailure: (error) =>
      logger.error({ err: error instanceof Error ? error.message : String(error) }, "readiness: the store is unreachable"),
  });
  const operations = createOperations(readiness);
  const rateLimit = config.rateLimit;
  const verifier = rateLimit
    ? createRateLimitedVerifier(stores.verifier, createRateLimiter({ ...rateLimit, clock }), rateLimit)
    : stores.verifier;

  // One observer for the API, the checkout and the sweep.
  const paymentEvents: PaymentEvents = metrics.paymentEvents;
  const stopSweep = startExpirySweep({
    expiry: createPaymentExpiry({ intents: stores.intents, clock, events: paymentEvents }),
    // Often enough that an intent is expired within a minute of its deadline.
    intervalMs: Math.min(60_000, config.checkout.ttlMs),
    logger,
  });
  const handler = createApp({
    intents: stores.intents,
    accounts: stores.accounts,
    verifier,
    clock,
    ids,
    logger,
    publicUrl: config.publicUrl,
    basePath: config.basePath,
    processors: config.processors,
    pageTokenSecret: config.pageTokenSecret ?? randomBytes(32).toString("base64url"),
    maxBodyBytes: config.maxBodyBytes,
    httpRoutes: [...operations.httpRoutes, createMetricsRoute({ registry: metrics.registry, token: config.metricsToken })],
    onRequestEnd: metrics.recordRequest,
    rpcServices: operations.rpcServices,
    merchants: stores.merchants,
    checkoutTtlMs: config.checkout.ttlMs,
    maxPaymentAttempts: config.checkout.maxAttempts,
    checkoutSecret: config.checkout.secret,
    events: paymentEvents,
  });
  const server = await listen(handler, { host: config.host, port: config.port, limits: config.limits });
  logger.info({ url: server.url, basePath: config.basePath, store: stores.kind }, "payment intent service listening");

  if (stores.demoKey) {
    const key = stores.demoKey;
    process.stdout.write(
      [
        "",
        `Payment Intent service on ${server.url} (gRPC, gRPC-Web, Connect and REST under ${config.basePath || "/"})`,
        `No API_KEYS set: demo merchant "demo" with API key ${key}`,
        "Try:",
        `  curl -s -X POST ${server.url}${config.basePath}/v2/payment-intents \\`,
        `    -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' \\`,
        `    -d '{"amount": 50000, "customerEmail": "ada@example.com", "clientReference": "order-1001"}'`,
        "",
      ].join("\n"),
    );
  }

  const shutdown = createShutdown({
    readiness,
    server,
    closeStores: () => {
      stopSweep();
      return stores.close();
    },
    ...config.shutdown,
    logger,
    exit: (code) => process.exit(code),
  });
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

await main();
