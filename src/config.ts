import { defaultListenLimits, type ListenLimits } from "./server/listen.js";
import { isLogLevel, logLevels, type LogLevel } from "./observability/log-level.js";
import { processorNamePattern } from "./service/payment-method-catalogue.js";

/** Config is every setting, read and checked once at start (see README, Configuration). */
export interface Config {
  host: string;
  port: number;
  basePath: string;
  publicUrl: string;
  /** Unset: start with a generated demo key. */
  apiKeys: { merchantId: string; key: string }[] | undefined;
  processors: string[];
  /** Unset: a random secret per process (page tokens then do not survive a restart). */
  pageTokenSecret: string | undefined;
  maxBodyBytes: number;
  /** Unset: the in-memory stores. */
  database: DatabaseConfig | undefined;
  /** LOG_LEVEL: the least severe level written. */
  logLevel: LogLevel;
  /** METRICS_TOKEN: the bearer token GET /metrics requires; unset, /metrics is open. */
  metricsToken: string | undefined;
  /** Timeouts and the HTTP/2 stream cap of the listener. */
  limits: ListenLimits;
  /** Per-API-key token bucket; unset when RATE_LIMIT_RPS is 0. */
  rateLimit: RateLimitConfig | undefined;
  shutdown: ShutdownConfig;
  checkout: CheckoutConfig;
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

/** RateLimitConfig: RATE_LIMIT_RPS and RATE_LIMIT_BURST. */
export interface RateLimitConfig {
  ratePerSecond: number;
  burst: number;
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
  poolMax: number;
  statementTimeoutMs: number;
}

/** ConfigError names the variable, the value and what is allowed, in one line. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function fail(name: string, value: string, allowed: string): never {
  throw new ConfigError(`${name}=${JSON.stringify(value)} is not valid: ${allowed}`);
}

const merchantIdPattern = /^[A-Za-z0-9_.-]{1,64}$/;
const apiKeyPattern = /^[\x21-\x2b\x2d-\x7e]{16,256}$/;

/** readConfig parses the environment; the first bad value throws a ConfigError. */
export function readConfig(env: Env): Config {
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
    if (!processorNamePattern.test(name) || ["card", "bank_transfer", "ussd"].includes(name)) {
      fail("PAYMENT_PROCESSORS", name, "comma-separated names of a-z 0-9 _ (starting with a letter), other than card, bank_transfer, ussd");
    }
  }
  if (new Set(processors).size !== processors.length) fail("PAYMENT_PROCESSORS", processors.join(","), "each name once");

  const pageTokenSecret = env.PAGE_TOKEN_SECRET || undefined;
  if (pageTokenSecret !== undefined && pageTokenSecret.length < 32) {
    fail("PAGE_TOKEN_SECRET", "…", "at least 32 characters");
  }

  return {
    host,
    port,
    basePath,
    publicUrl: publicUrl.replace(/\/+$/, ""),
    apiKeys,
    processors,
    pageTokenSecret,
    maxBodyBytes: 64 * 1024,
    database: readDatabaseConfig(env),
    logLevel: readLogLevel(env),
    metricsToken: readMetricsToken(env),
    checkout: readCheckoutConfig(env),
    limits: readListenLimits(env),
    rateLimit: readRateLimit(env),
    shutdown: {
      delayMs: readInteger(env, "SHUTDOWN_DELAY_MS", 0, 0, 600_000),
      graceMs: readInteger(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    },
  };
}

function readListenLimits(env: Env): ListenLimits {
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
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs: readInteger(env, "IDLE_TIMEOUT_MS", defaultListenLimits.idleTimeoutMs, 100, 3_600_000),
    maxConcurrentStreams: readInteger(env, "MAX_CONCURRENT_STREAMS", defaultListenLimits.maxConcurrentStreams, 1, 100_000),
  };
}

function readRateLimit(env: Env): RateLimitConfig | undefined {
  const ratePerSecond = readInteger(env, "RATE_LIMIT_RPS", 100, 0, 1_000_000);
  const burst = readInteger(env, "RATE_LIMIT_BURST", 200, 1, 1_000_000);
  return ratePerSecond === 0 ? undefined : { ratePerSecond, burst };
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
  return {
    url,
    migrateOnStart: migrate === "true",
    poolMax: readInteger(env, "DB_POOL_MAX", 10, 1, 1000),
    statementTimeoutMs: readInteger(env, "DB_STATEMENT_TIMEOUT_MS", 5000, 100, 600_000),
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

function readMetricsToken(env: Env): string | undefined {
  const token = env.METRICS_TOKEN || undefined;
  // A credential: name the variable, never echo the value.
  if (token !== undefined && !apiKeyPattern.test(token)) {
    fail("METRICS_TOKEN", "…", "16-256 printable characters without spaces or commas");
  }
  return token;
}
