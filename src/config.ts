import { connectionBudget, defaultListenLimits, defaultMaxConnections, type ListenLimits } from "./listener/listen-limits.js";
import { isLogLevel, logLevels, type LogLevel } from "./observability/log-level.js";
import { isPaymentMethodName } from "./service/payment-method-catalogue.js";
import { defaultRetrySchedule, parseRetrySchedule } from "./webhooks/retry-policy.js";
import { isLoopback } from "./lib/is-loopback.js";
import { parseSecretKey } from "./lib/secret-box.js";
import { paystackName } from "./processor/paystack/paystack-name.js";
import { isPaystackSecretKey } from "./processor/paystack/paystack-secret-key.js";
import { parseTrustedProxies, type TrustedProxies } from "./listener/trusted-proxies.js";

/** Config is every setting, read and checked once at start (see README, Configuration). */
export interface Config {
  host: string;
  port: number;
  basePath: string;
  publicUrl: string;
  /** Unset: start with a generated demo key. */
  apiKeys: { merchantId: string; key: string }[] | undefined;
  /** PAYMENT_PROCESSORS, and paystack when PAYSTACK_SECRET_KEY is set: the processor methods offered. */
  processors: string[];
  /** PAYSTACK_SECRET_KEY and PAYSTACK_BASE_URL; unset without a key. */
  paystack: PaystackConfig | undefined;
  /** Unset: a random secret per process (page tokens then do not survive a restart). */
  pageTokenSecret: string | undefined;
  maxBodyBytes: number;
  /** Unset: the in-memory stores. */
  database: DatabaseConfig | undefined;
  /** LOG_LEVEL: the least severe level written. */
  logLevel: LogLevel;
  /** METRICS_TOKEN: the bearer token GET /metrics requires; unset, /metrics is open. */
  metricsToken: string | undefined;
  /** CORS_ALLOWED_ORIGINS: the browser origins that may call the API; unset, no CORS headers at all. */
  corsAllowedOrigins: "*" | string[] | undefined;
  /** Timeouts, connection caps and output bounds of the listener. */
  limits: ListenLimits;
  /** TRUSTED_PROXIES: peers that send a PROXY header naming the client; unset, nobody. */
  trustedProxies: TrustedProxies | undefined;
  /** Per-API-key token bucket; unset when RATE_LIMIT_RPS is 0. */
  rateLimit: RateLimitConfig | undefined;
  /** Failed authentications per client address; unset when AUTH_FAILURES_PER_MINUTE is 0. */
  failedAuth: FailedAuthConfig | undefined;
  /** Where the limits are shared between instances; unset (REDIS_URL unset): each instance's memory. */
  redis: RedisConfig | undefined;
  shutdown: ShutdownConfig;
  checkout: CheckoutConfig;
  processor: ProcessorConfig;
  /** TEST_HELPERS and TEST_CLOCK: the sandbox's test helpers. */
  testHelpers: TestHelpersConfig;
  webhooks: WebhookConfig;
}

/** PaystackConfig: collecting through Paystack (docs/payments.md, "Collecting with Paystack"). */
export interface PaystackConfig {
  /** PAYSTACK_SECRET_KEY: sk_test_… or sk_live_…; never echoed or logged. */
  secretKey: string;
  /** PAYSTACK_BASE_URL: https://api.paystack.co unless a test points it at a stand-in. */
  baseUrl: string;
}

/** TestHelpersConfig: what a test suite may drive (README, Testing your integration). */
export interface TestHelpersConfig {
  /** TEST_HELPERS: serve TestHelperService. */
  enabled: boolean;
  /** TEST_CLOCK: a clock the helpers can move forward, and its two helpers. */
  clock: boolean;
  /** TEST_MERCHANTS_MAX: merchants CreateMerchant may make in this process's life. */
  maxMerchants: number;
}

/** WebhookConfig: how webhooks are delivered (README, Webhooks). */
export interface WebhookConfig {
  /** WEBHOOK_TIMEOUT_MS: the longest one attempt may take (DNS, connection, answer). */
  timeoutMs: number;
  /** WEBHOOK_RETRY_SCHEDULE: delays in ms before each retry after a failed attempt. */
  retrySchedule: number[];
  /** WEBHOOK_ALLOW_PRIVATE_URLS: http URLs and non-public addresses allowed (development and tests only). */
  allowPrivateUrls: boolean;
  /** WEBHOOK_SECRET_KEY: the AES-256-GCM key of signing secrets at rest; unset, stored as they are. Never echoed. */
  secretKey: Buffer | undefined;
  /** WEBHOOK_CONCURRENCY: attempts in flight per instance. */
  concurrency: number;
  /** WEBHOOK_CONCURRENCY_PER_ENDPOINT: attempts in flight per endpoint, over every instance. */
  concurrencyPerEndpoint: number;
  /** WEBHOOK_CONCURRENCY_PER_MERCHANT: of an instance's slots, the most one merchant's attempts hold (default half of WEBHOOK_CONCURRENCY). */
  concurrencyPerMerchant: number;
  /** WEBHOOK_POLL_INTERVAL_MS: how often each instance looks for due deliveries. */
  pollIntervalMs: number;
  /**
   * WEBHOOK_WORKER_THREAD: a server process runs delivery on a worker thread
   * of its own, off the API's event loop (default true; docs/webhooks.md,
   * "Where the engine runs").
   */
  workerThread: boolean;
  /** EVENT_RETENTION_DAYS: how long events (and their ended deliveries) are kept. */
  eventRetentionDays: number;
}

/** CheckoutConfig: the customer's payment page and the payment lifecycle. */
export interface CheckoutConfig {
  /** CHECKOUT_TTL: how long after creation a pending intent can be paid. */
  ttlMs: number;
  /** MAX_PAYMENT_ATTEMPTS: declined attempts after which an intent fails. */
  maxAttempts: number;
  /** CHECKOUT_SECRET: signs the checkout forms; unset, a random secret per process. */
  secret: string | undefined;
}

/** ProcessorConfig: how the service talks to its processor and reconciles what it did not hear back (docs/payments.md). */
export interface ProcessorConfig {
  /** PROCESSOR_TIMEOUT_MS: the longest one processor call is waited for; no answer in time is unknown, and reconciled. */
  timeoutMs: number;
  /** RECONCILE_INTERVAL_MS: how often each instance asks the processor about open attempts and pending refunds. */
  reconcileIntervalMs: number;
  /** PROCESSING_ALARM_AFTER: an attempt open longer than this is logged at error (once) and counted in /metrics. */
  alarmAfterMs: number;
  /** TEST_PROCESSOR_LATENCY_MS: the test processor waits this long in every call. */
  testLatencyMs: number;
  /** TEST_PROCESSOR_WEBHOOK_DELAY_MS: a test bank transfer or USSD payment arrives, and its processor webhook is sent, this long after the customer confirms. */
  testWebhookDelayMs: number;
  /** TEST_PROCESSOR_JOURNAL: a file where the test processor keeps what it did across restarts (drills); unset, memory only. */
  testJournal: string | undefined;
}

/** RateLimitConfig: RATE_LIMIT_RPS and RATE_LIMIT_BURST. */
export interface RateLimitConfig {
  ratePerSecond: number;
  burst: number;
}

/** FailedAuthConfig: AUTH_FAILURES_PER_MINUTE and AUTH_FAILURES_BURST, per client address group. */
export interface FailedAuthConfig {
  perMinute: number;
  burst: number;
}

/** RedisConfig is set when REDIS_URL is. */
export interface RedisConfig {
  /** redis:// or rediss:// URL; may carry a password, so it is never echoed or logged. */
  url: string;
  /** REDIS_KEY_PREFIX: every key the limiters write starts with it, so several services can share one Redis. */
  keyPrefix: string;
}

/** ShutdownConfig: what SIGTERM and SIGINT do (README, Health and operations). */
export interface ShutdownConfig {
  /** Time to keep serving with /readyz at 503, so balancers stop sending traffic first. */
  delayMs: number;
  /** Longest requests in flight may take to finish once the port is closed. */
  graceMs: number;
}

/** DatabaseConfig is set when DATABASE_URL is. */
export interface DatabaseConfig {
  url: string;
  /** Apply pending migrations at start (MIGRATE_ON_START). */
  migrateOnStart: boolean;
  /** DB_POOL_MAX: most connections per process. */
  poolMax: number;
  /** DB_STATEMENT_TIMEOUT_MS: the deadline of one store call, the wait for a connection included. */
  statementTimeoutMs: number;
  /** DB_LOCK_TIMEOUT_MS: longest a statement waits for a lock; at most statementTimeoutMs. */
  lockTimeoutMs: number;
  /**
   * DB_UNREADY_AFTER_MS: how long the database may stay unreachable from this
   * instance (no connection opened, no statement answered) before /readyz says
   * not ready. Shorter outages are answered 503 with the instance in the balancer.
   */
  unreadyAfterMs: number;
}

/**
 * Every environment variable readConfig reads: the configuration table of the
 * README. The ./testing entry takes the same names as options.
 */
export const settingNames = [
  "HOST",
  "PORT",
  "BASE_PATH",
  "PUBLIC_URL",
  "API_KEYS",
  "PAYMENT_PROCESSORS",
  "PAGE_TOKEN_SECRET",
  "CHECKOUT_TTL",
  "MAX_PAYMENT_ATTEMPTS",
  "CHECKOUT_SECRET",
  "PROCESSOR_TIMEOUT_MS",
  "RECONCILE_INTERVAL_MS",
  "PROCESSING_ALARM_AFTER",
  "TEST_PROCESSOR_LATENCY_MS",
  "TEST_PROCESSOR_WEBHOOK_DELAY_MS",
  "TEST_PROCESSOR_JOURNAL",
  "DATABASE_URL",
  "MIGRATE_ON_START",
  "DB_POOL_MAX",
  "DB_STATEMENT_TIMEOUT_MS",
  "DB_UNREADY_AFTER_MS",
  "DB_LOCK_TIMEOUT_MS",
  "RATE_LIMIT_RPS",
  "RATE_LIMIT_BURST",
  "AUTH_FAILURES_PER_MINUTE",
  "AUTH_FAILURES_BURST",
  "REDIS_URL",
  "REDIS_KEY_PREFIX",
  "HEADERS_TIMEOUT_MS",
  "REQUEST_TIMEOUT_MS",
  "IDLE_TIMEOUT_MS",
  "MAX_CONCURRENT_STREAMS",
  "WRITE_TIMEOUT_MS",
  "MAX_PIPELINED_REQUESTS",
  "MAX_UNSENT_BYTES",
  "MAX_CONNECTIONS",
  "MAX_CONNECTIONS_PER_ADDRESS",
  "TRUSTED_PROXIES",
  "SHUTDOWN_DELAY_MS",
  "SHUTDOWN_GRACE_MS",
  "LOG_LEVEL",
  "METRICS_TOKEN",
  "CORS_ALLOWED_ORIGINS",
  "WEBHOOK_TIMEOUT_MS",
  "WEBHOOK_RETRY_SCHEDULE",
  "WEBHOOK_ALLOW_PRIVATE_URLS",
  "WEBHOOK_SECRET_KEY",
  "WEBHOOK_CONCURRENCY",
  "WEBHOOK_CONCURRENCY_PER_ENDPOINT",
  "WEBHOOK_CONCURRENCY_PER_MERCHANT",
  "WEBHOOK_POLL_INTERVAL_MS",
  "WEBHOOK_WORKER_THREAD",
  "EVENT_RETENTION_DAYS",
  "TEST_HELPERS",
  "TEST_CLOCK",
  "TEST_MERCHANTS_MAX",
  "PAYSTACK_SECRET_KEY",
  "PAYSTACK_BASE_URL",
] as const;

/** SettingName is one variable of the configuration table. */
export type SettingName = (typeof settingNames)[number];

/** ConfigError names the variable, the value and what is allowed, in one line. */
export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

function fail(name: string, value: string, allowed: string): never {
  throw new ConfigError(`${name}=${JSON.stringify(value)} is not valid: ${allowed}`);
}

const merchantIdPattern = /^[A-Za-z0-9_.-]{1,64}$/;
const apiKeyPattern = /^[\x21-\x2b\x2d-\x7e]{16,256}$/;

/** What readConfig needs to know about the machine beside the environment. */
export interface SystemLimits {
  /** The process's open file limit (RLIMIT_NOFILE); undefined when unknown. */
  openFileLimit?: number;
}

/** readConfig parses the environment; the first bad value throws a ConfigError. */
export function readConfig(env: Env, system: SystemLimits = {}): Config {
  const host = env.HOST || "127.0.0.1";

  const portText = env.PORT ?? "8080";
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 0 && port <= 65535)) fail("PORT", portText, "an integer from 0 to 65535");

  const basePath = env.BASE_PATH ?? "/v1";
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) {
    fail("BASE_PATH", basePath, 'empty, or a path such as "/v1" with no trailing slash');
  }

  const publicUrl = env.PUBLIC_URL || `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (!/^https?:\/\/[^/?#\s]+$/.test(publicUrl.replace(/\/+$/, "")) || !URL.canParse(publicUrl)) {
    fail("PUBLIC_URL", publicUrl, "an http or https origin such as https://pay.example.com");
  }

  let apiKeys: Config["apiKeys"];
  if (env.API_KEYS !== undefined && env.API_KEYS.trim() !== "") {
    const seen = new Set<string>();
    apiKeys = env.API_KEYS.split(",").map((entry) => {
      const separator = entry.indexOf(":");
      const merchantId = entry.slice(0, separator).trim();
      const key = entry.slice(separator + 1).trim();
      // Never echo the entry itself: without a merchant it may be all key.
      const shown = separator < 0 ? "…" : `${merchantId}:…`;
      if (separator < 0 || !merchantIdPattern.test(merchantId)) {
        fail("API_KEYS", shown, "comma-separated merchant:key pairs; merchant is 1-64 of A-Z a-z 0-9 _ . -");
      }
      if (!apiKeyPattern.test(key)) fail("API_KEYS", shown, "each key is 16-256 printable characters without spaces or commas");
      if (seen.has(key)) fail("API_KEYS", shown, "each key may appear once");
      seen.add(key);
      return { merchantId, key };
    });
  }

  const processors = (env.PAYMENT_PROCESSORS ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  for (const name of processors) {
    if (!isPaymentMethodName(name) || ["card", "bank_transfer", "ussd"].includes(name)) {
      fail("PAYMENT_PROCESSORS", name, "comma-separated names of a-z 0-9 _ (starting with a letter), other than card, bank_transfer, ussd");
    }
    if (name === paystackName) fail("PAYMENT_PROCESSORS", name, "paystack is offered when PAYSTACK_SECRET_KEY is set, not listed here");
  }
  if (new Set(processors).size !== processors.length) fail("PAYMENT_PROCESSORS", processors.join(","), "each name once");
  const paystack = readPaystackConfig(env);
  if (paystack) processors.push(paystackName);

  const pageTokenSecret = env.PAGE_TOKEN_SECRET || undefined;
  if (pageTokenSecret !== undefined && pageTokenSecret.length < 32) {
    fail("PAGE_TOKEN_SECRET", "…", "at least 32 characters");
  }

  const database = readDatabaseConfig(env);
  return {
    host,
    port,
    basePath,
    publicUrl: publicUrl.replace(/\/+$/, ""),
    apiKeys,
    processors,
    paystack,
    pageTokenSecret,
    maxBodyBytes: 64 * 1024,
    database,
    logLevel: readLogLevel(env),
    metricsToken: readMetricsToken(env),
    corsAllowedOrigins: readCorsOrigins(env),
    checkout: readCheckoutConfig(env),
    processor: {
      timeoutMs: readInteger(env, "PROCESSOR_TIMEOUT_MS", 10_000, 100, 120_000),
      reconcileIntervalMs: readInteger(env, "RECONCILE_INTERVAL_MS", 10_000, 50, 3_600_000),
      alarmAfterMs: readDuration(env, "PROCESSING_ALARM_AFTER", 3_600_000, 1000, 30 * 86_400_000),
      testLatencyMs: readInteger(env, "TEST_PROCESSOR_LATENCY_MS", 0, 0, 120_000),
      testWebhookDelayMs: readInteger(env, "TEST_PROCESSOR_WEBHOOK_DELAY_MS", 2000, 0, 3_600_000),
      testJournal: env.TEST_PROCESSOR_JOURNAL || undefined,
    },
    webhooks: readWebhookConfig(env, database === undefined && isLoopback(host)),
    limits: readListenLimits(env, system.openFileLimit, database?.poolMax ?? 0),
    trustedProxies: readTrustedProxies(env),
    rateLimit: readRateLimit(env),
    failedAuth: readFailedAuth(env),
    redis: readRedisConfig(env),
    shutdown: {
      delayMs: readInteger(env, "SHUTDOWN_DELAY_MS", 0, 0, 600_000),
      graceMs: readInteger(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    },
    testHelpers: readTestHelpers(env, database !== undefined, host),
  };
}

/**
 * readWebhookConfig reads the WEBHOOK_* variables; the first bad value throws
 * a ConfigError. sandbox (memory mode listening on a loopback address, as
 * startTestServer and a local `serve` do) makes local receivers work by
 * default: http and private addresses are allowed there, as nobody but this
 * machine's own merchants can register an endpoint.
 */
export function readWebhookConfig(env: Env, sandbox = false): WebhookConfig {
  const scheduleText = env.WEBHOOK_RETRY_SCHEDULE || defaultRetrySchedule;
  let retrySchedule: number[];
  try {
    retrySchedule = parseRetrySchedule(scheduleText);
  } catch (error) {
    fail("WEBHOOK_RETRY_SCHEDULE", scheduleText, (error as Error).message);
  }
  const allowPrivate = env.WEBHOOK_ALLOW_PRIVATE_URLS || String(sandbox);
  if (allowPrivate !== "true" && allowPrivate !== "false") fail("WEBHOOK_ALLOW_PRIVATE_URLS", allowPrivate, "true or false");
  let secretKey: Buffer | undefined;
  if (env.WEBHOOK_SECRET_KEY) {
    try {
      secretKey = parseSecretKey(env.WEBHOOK_SECRET_KEY);
    } catch {
      // A key: name the variable, never echo the value.
      fail("WEBHOOK_SECRET_KEY", "…", "32 bytes written as 64 hex digits or as base64 (openssl rand -base64 32)");
    }
  }
  const concurrency = readInteger(env, "WEBHOOK_CONCURRENCY", 32, 1, 1000);
  return {
    timeoutMs: readInteger(env, "WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
    retrySchedule,
    allowPrivateUrls: allowPrivate === "true",
    secretKey,
    concurrency,
    concurrencyPerEndpoint: readInteger(env, "WEBHOOK_CONCURRENCY_PER_ENDPOINT", 4, 1, 100),
    concurrencyPerMerchant: readInteger(env, "WEBHOOK_CONCURRENCY_PER_MERCHANT", Math.ceil(concurrency / 2), 1, concurrency),
    pollIntervalMs: readInteger(env, "WEBHOOK_POLL_INTERVAL_MS", 1000, 50, 60_000),
    workerThread: readBoolean(env, "WEBHOOK_WORKER_THREAD", true),
    eventRetentionDays: readInteger(env, "EVENT_RETENTION_DAYS", 30, 30, 3650),
  };
}


/**
 * readTestHelpers: on by default only in memory mode (a sandbox) listening
 * on a loopback address, which only this machine reaches; a service with a
 * database, or one other machines can reach, must ask for them, so neither a
 * production deployment nor a container on 0.0.0.0 serves them by accident.
 * The test clock is a helper, so it needs them on.
 */
function readTestHelpers(env: Env, hasDatabase: boolean, host: string): TestHelpersConfig {
  const enabled = readBoolean(env, "TEST_HELPERS", !hasDatabase && isLoopback(host));
  // TEST_CLOCK only matters with the helpers on: "false" with them off is no contradiction.
  const clock = readBoolean(env, "TEST_CLOCK", false);
  if (clock && !enabled) {
    const why = hasDatabase ? " (with DATABASE_URL it defaults to false)" : isLoopback(host) ? "" : ` (with HOST ${host}, not a loopback address, it defaults to false)`;
    fail("TEST_CLOCK", "true", `false unless TEST_HELPERS=true${why}`);
  }
  return { enabled, clock, maxMerchants: readInteger(env, "TEST_MERCHANTS_MAX", 10_000, 1, 10_000_000) };
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const text = env[name];
  if (text === undefined || text === "") return fallback;
  if (text !== "true" && text !== "false") fail(name, text, "true or false");
  return text === "true";
}


function readListenLimits(env: Env, openFileLimit: number | undefined, poolMax: number): ListenLimits {
  const headersTimeoutMs = readInteger(env, "HEADERS_TIMEOUT_MS", defaultListenLimits.headersTimeoutMs, 100, 600_000);
  const requestTimeoutMs = readInteger(
    env,
    "REQUEST_TIMEOUT_MS",
    Math.max(defaultListenLimits.requestTimeoutMs, headersTimeoutMs),
    100,
    3_600_000,
  );
  // A request cannot take less time than its own headers (Node refuses that too).
  if (requestTimeoutMs < headersTimeoutMs) {
    fail("REQUEST_TIMEOUT_MS", String(requestTimeoutMs), `at least HEADERS_TIMEOUT_MS (${headersTimeoutMs})`);
  }
  const { maxConnections, maxConnectionsPerAddress } = readConnectionCaps(env, openFileLimit, poolMax);
  return {
    ...defaultListenLimits,
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: readInteger(env, "IDLE_TIMEOUT_MS", defaultListenLimits.idleTimeoutMs, 100, 3_600_000),
    maxConcurrentStreams: readInteger(env, "MAX_CONCURRENT_STREAMS", defaultListenLimits.maxConcurrentStreams, 1, 100_000),
    writeTimeoutMs: readInteger(env, "WRITE_TIMEOUT_MS", defaultListenLimits.writeTimeoutMs, 100, 3_600_000),
    maxPipelinedRequests: readInteger(env, "MAX_PIPELINED_REQUESTS", defaultListenLimits.maxPipelinedRequests, 1, 10_000),
    maxUnsentBytes: readInteger(env, "MAX_UNSENT_BYTES", defaultListenLimits.maxUnsentBytes, 16_384, 268_435_456),
    maxConnections,
    maxConnectionsPerAddress,
  };
}

/**
 * readConnectionCaps reads MAX_CONNECTIONS and MAX_CONNECTIONS_PER_ADDRESS.
 * Every connection holds a descriptor, so the total may not pass what the
 * open file limit leaves after the database pool and the process's own
 * descriptors: past it accept() fails and nobody, /healthz included, gets in.
 */
function readConnectionCaps(env: Env, openFileLimit: number | undefined, poolMax: number) {
  const budget = openFileLimit === undefined ? undefined : connectionBudget(openFileLimit, poolMax, defaultListenLimits.loopbackReserve);
  if (budget !== undefined && budget < 1) {
    throw new ConfigError(
      `the open file limit (${openFileLimit}) leaves no descriptors for connections after DB_POOL_MAX (${poolMax}): raise it (ulimit -n)`,
    );
  }
  const maxConnections = readInteger(env, "MAX_CONNECTIONS", Math.min(defaultMaxConnections, budget ?? Infinity), 1, 1_000_000);
  if (budget !== undefined && maxConnections > budget) {
    fail(
      "MAX_CONNECTIONS",
      String(maxConnections),
      `at most ${budget}: the open file limit (${openFileLimit}) less DB_POOL_MAX (${poolMax}) and ${openFileLimit! - poolMax - budget} descriptors the process keeps`,
    );
  }
  const maxConnectionsPerAddress = readInteger(
    env,
    "MAX_CONNECTIONS_PER_ADDRESS",
    Math.max(1, Math.floor(maxConnections / 4)),
    1,
    1_000_000,
  );
  if (maxConnectionsPerAddress > maxConnections) {
    fail("MAX_CONNECTIONS_PER_ADDRESS", String(maxConnectionsPerAddress), `at most MAX_CONNECTIONS (${maxConnections})`);
  }
  return { maxConnections, maxConnectionsPerAddress };
}

function readTrustedProxies(env: Env): TrustedProxies | undefined {
  const text = env.TRUSTED_PROXIES?.trim();
  if (!text) return undefined;
  try {
    return parseTrustedProxies(text);
  } catch (error) {
    fail("TRUSTED_PROXIES", text, `comma-separated addresses or CIDR blocks such as 10.0.0.0/8,fd00::/8 (${(error as Error).message})`);
  }
}

function readRateLimit(env: Env): RateLimitConfig | undefined {
  const ratePerSecond = readInteger(env, "RATE_LIMIT_RPS", 100, 0, 1_000_000);
  const burst = readInteger(env, "RATE_LIMIT_BURST", 200, 1, 1_000_000);
  return ratePerSecond === 0 ? undefined : { ratePerSecond, burst };
}

function readFailedAuth(env: Env): FailedAuthConfig | undefined {
  const perMinute = readInteger(env, "AUTH_FAILURES_PER_MINUTE", 60, 0, 1_000_000);
  const burst = readInteger(env, "AUTH_FAILURES_BURST", Math.max(1, perMinute), 1, 1_000_000);
  return perMinute === 0 ? undefined : { perMinute, burst };
}

function readRedisConfig(env: Env): RedisConfig | undefined {
  const url = env.REDIS_URL;
  if (url === undefined || url === "") return undefined;
  if (!/^rediss?:\/\/[^/?#\s]/.test(url) || !URL.canParse(url)) {
    // The URL may carry a password: name the variable, never echo the value.
    fail("REDIS_URL", "…", "a redis://[user:password@]host:port[/db] or rediss:// URL");
  }
  const keyPrefix = env.REDIS_KEY_PREFIX || "payments:limits";
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(keyPrefix)) fail("REDIS_KEY_PREFIX", keyPrefix, "1-64 of A-Z a-z 0-9 _ . : -");
  return { url, keyPrefix };
}

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === "") return fallback;
  const value = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) fail(name, text, `an integer from ${min} to ${max}`);
  return value;
}

function readDatabaseConfig(env: Env): DatabaseConfig | undefined {
  const url = env.DATABASE_URL;
  if (url === undefined || url === "") return undefined;
  if (!/^postgres(ql)?:\/\//.test(url) || !URL.canParse(url)) {
    // The URL may carry a password: name the variable, never echo the value.
    fail("DATABASE_URL", "…", "a postgres://user:password@host:port/database URL");
  }
  const migrate = env.MIGRATE_ON_START ?? "true";
  if (migrate !== "true" && migrate !== "false") fail("MIGRATE_ON_START", migrate, "true or false");
  const statementTimeoutMs = readInteger(env, "DB_STATEMENT_TIMEOUT_MS", 5000, 100, 600_000);
  // A lock wait is part of a statement: it cannot outlast the statement's deadline.
  const lockTimeoutMs = readInteger(env, "DB_LOCK_TIMEOUT_MS", Math.min(2000, statementTimeoutMs), 10, 600_000);
  if (lockTimeoutMs > statementTimeoutMs) {
    fail("DB_LOCK_TIMEOUT_MS", String(lockTimeoutMs), `at most DB_STATEMENT_TIMEOUT_MS (${statementTimeoutMs})`);
  }
  return {
    url,
    migrateOnStart: migrate === "true",
    poolMax: readInteger(env, "DB_POOL_MAX", 10, 1, 1000),
    statementTimeoutMs,
    lockTimeoutMs,
    unreadyAfterMs: readInteger(env, "DB_UNREADY_AFTER_MS", 30_000, 1000, 3_600_000),
  };
}

const durationUnits: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** readDuration reads "90s", "30m", "24h", "7d" (or "500ms") into milliseconds. */
function readDuration(env: Env, name: string, fallbackMs: number, minMs: number, maxMs: number): number {
  const text = env[name];
  if (text === undefined || text === "") return fallbackMs;
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text);
  const value = match ? Number(match[1]) * durationUnits[match[2]!]! : NaN;
  if (!(value >= minMs && value <= maxMs)) {
    fail(name, text, `a duration such as 90s, 30m, 24h or 7d, from ${minMs / 1000}s to ${maxMs / 86_400_000}d`);
  }
  return value;
}

function readCheckoutConfig(env: Env): CheckoutConfig {
  const secret = env.CHECKOUT_SECRET || undefined;
  if (secret !== undefined && secret.length < 32) fail("CHECKOUT_SECRET", "…", "at least 32 characters");
  return {
    ttlMs: readDuration(env, "CHECKOUT_TTL", 24 * 3_600_000, 1000, 30 * 86_400_000),
    maxAttempts: readInteger(env, "MAX_PAYMENT_ATTEMPTS", 3, 1, 20),
    secret,
  };
}

function readLogLevel(env: Env): LogLevel {
  const level = env.LOG_LEVEL || "info";
  if (!isLogLevel(level)) fail("LOG_LEVEL", level, `one of ${logLevels.join(", ")}`);
  return level;
}

/**
 * readCorsOrigins reads "*" or a comma-separated list of exact origins
 * (http(s)://host[:port], as a browser sends them in Origin). An entry a
 * browser would never send (a path, a trailing slash, upper case, a default
 * port) would match nothing, so it is refused, naming what the browser sends.
 */
function readCorsOrigins(env: Env): "*" | string[] | undefined {
  const text = env.CORS_ALLOWED_ORIGINS?.trim();
  if (text === undefined || text === "") return undefined;
  if (text === "*") return "*";
  const origins = text.split(",").map((origin) => origin.trim());
  const expected = '"*" or comma-separated origins such as https://shop.example.com (scheme, host and port only)';
  for (const origin of origins) {
    const url = URL.canParse(origin) ? new URL(origin) : undefined;
    if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) fail("CORS_ALLOWED_ORIGINS", origin, expected);
    // The URL parser takes "*" as a host character; it would match only itself.
    if (url.hostname.includes("*")) fail("CORS_ALLOWED_ORIGINS", origin, `${expected}; there are no wildcards: list each origin`);
    if (url.origin !== origin) fail("CORS_ALLOWED_ORIGINS", origin, `${expected}; a browser on that page sends Origin: ${url.origin}`);
  }
  return origins;
}

function readMetricsToken(env: Env): string | undefined {
  const token = env.METRICS_TOKEN || undefined;
  // A credential: name the variable, never echo the value.
  if (token !== undefined && !apiKeyPattern.test(token)) {
    fail("METRICS_TOKEN", "…", "16-256 printable characters without spaces or commas");
  }
  return token;
}

/**
 * readPaystackConfig: no PAYSTACK_SECRET_KEY, no Paystack. The key is
 * checked for form (a public pk_ key pasted by mistake stops the start) and
 * never echoed, not even in its own error. PAYSTACK_BASE_URL is https, or
 * http to this machine (where a test's stand-in runs), since every call carries the key.
 */
export function readPaystackConfig(env: Env): PaystackConfig | undefined {
  const secretKey = env.PAYSTACK_SECRET_KEY?.trim() || undefined;
  const baseText = env.PAYSTACK_BASE_URL?.trim() || undefined;
  if (secretKey === undefined) {
    if (baseText !== undefined) fail("PAYSTACK_BASE_URL", baseText, "set only with PAYSTACK_SECRET_KEY");
    return undefined;
  }
  if (!isPaystackSecretKey(secretKey)) fail("PAYSTACK_SECRET_KEY", "…", "sk_test_ or sk_live_ followed by the key's letters and digits (Paystack's secret key, not the pk_ public key)");
  const baseUrl = (baseText ?? "https://api.paystack.co").replace(/\/+$/, "");
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  const allowed =
    url !== undefined &&
    url.username === "" &&
    url.password === "" &&
    url.search === "" &&
    url.hash === "" &&
    (url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url.hostname)));
  if (!allowed) fail("PAYSTACK_BASE_URL", baseText ?? "", "an https URL such as https://api.paystack.co (http only to 127.0.0.1 or localhost), without credentials, query or fragment");
  return { secretKey, baseUrl };
}
