import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { ConfigError, readConfig, settingNames, type Config } from "../../src/config.js";

const goodKeyA = "sk_test_0123456789abcdefA";
const goodKeyB = "sk_test_0123456789abcdefB";

/** Asserts readConfig refuses env with a ConfigError that starts with the variable's name. */
function assertRefused(env: Record<string, string>, variable: string): ConfigError {
  let caught: unknown;
  assert.throws(
    () => readConfig(env),
    (error: unknown) => {
      caught = error;
      return error instanceof ConfigError;
    },
  );
  const error = caught as ConfigError;
  assert.ok(error.message.startsWith(`${variable}=`), `message does not name ${variable}: ${error.message}`);
  return error;
}

const dbUrl = "postgres://app:pw@db.internal:5432/payments";

describe("readConfig", () => {
  it("reads the checkout settings with their defaults", () => {
    assert.deepEqual(readConfig({}).checkout, { ttlMs: 86_400_000, maxAttempts: 3, secret: undefined });
    const secret = "c".repeat(32);
    assert.deepEqual(readConfig({ CHECKOUT_TTL: "90s", MAX_PAYMENT_ATTEMPTS: "5", CHECKOUT_SECRET: secret }).checkout, {
      ttlMs: 90_000,
      maxAttempts: 5,
      secret,
    });
    for (const [text, ms] of [["1500ms", 1500], ["30m", 1_800_000], ["24h", 86_400_000], ["7d", 604_800_000]] as const) {
      assert.equal(readConfig({ CHECKOUT_TTL: text }).checkout.ttlMs, ms, text);
    }
  });

  it("reads the limits, rate limit and shutdown settings with their defaults", () => {
    const defaults = readConfig({});
    assert.deepEqual(defaults.limits, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      idleTimeoutMs: 65_000,
      maxConcurrentStreams: 100,
      writeTimeoutMs: 30_000,
      maxPipelinedRequests: 16,
      maxUnsentBytes: 262_144,
      maxConnections: 4096,
      maxConnectionsPerAddress: 1024,
      loopbackReserve: 8,
      goawayGraceMs: 1000,
    });
    assert.deepEqual(defaults.rateLimit, { ratePerSecond: 100, burst: 200 });
    assert.deepEqual(defaults.shutdown, { delayMs: 0, graceMs: 10_000 });
    const set = readConfig({
      HEADERS_TIMEOUT_MS: "2000",
      REQUEST_TIMEOUT_MS: "5000",
      IDLE_TIMEOUT_MS: "120000",
      MAX_CONCURRENT_STREAMS: "250",
      WRITE_TIMEOUT_MS: "5000",
      MAX_PIPELINED_REQUESTS: "4",
      MAX_UNSENT_BYTES: "65536",
      MAX_CONNECTIONS: "500",
      MAX_CONNECTIONS_PER_ADDRESS: "50",
      RATE_LIMIT_RPS: "5",
      RATE_LIMIT_BURST: "10",
      SHUTDOWN_DELAY_MS: "3000",
      SHUTDOWN_GRACE_MS: "0",
    });
    assert.deepEqual(set.limits, {
      headersTimeoutMs: 2000,
      requestTimeoutMs: 5000,
      idleTimeoutMs: 120_000,
      maxConcurrentStreams: 250,
      writeTimeoutMs: 5000,
      maxPipelinedRequests: 4,
      maxUnsentBytes: 65_536,
      maxConnections: 500,
      maxConnectionsPerAddress: 50,
      loopbackReserve: 8,
      goawayGraceMs: 1000,
    });
    assert.deepEqual(set.rateLimit, { ratePerSecond: 5, burst: 10 });
    assert.deepEqual(set.shutdown, { delayMs: 3000, graceMs: 0 });
  });

  it("derives MAX_CONNECTIONS from the open file limit, less the database pool and the process's own descriptors", () => {
    // 1024 - 64 for the process - 8 kept for loopback.
    assert.equal(readConfig({}, { openFileLimit: 1024 }).limits.maxConnections, 952);
    assert.equal(readConfig({}, { openFileLimit: 1024 }).limits.maxConnectionsPerAddress, 238);
    assert.equal(readConfig({ DATABASE_URL: dbUrl, DB_POOL_MAX: "100" }, { openFileLimit: 1024 }).limits.maxConnections, 852);
    // A generous limit leaves the default.
    assert.equal(readConfig({}, { openFileLimit: 1_048_576 }).limits.maxConnections, 4096);
    assert.equal(readConfig({ MAX_CONNECTIONS: "100" }).limits.maxConnectionsPerAddress, 25);
  });

  it("refuses MAX_CONNECTIONS past what the open file limit allows, saying why", () => {
    const error = assertRefused({ MAX_CONNECTIONS: "2000000" }, "MAX_CONNECTIONS");
    assert.equal(error.message, 'MAX_CONNECTIONS="2000000" is not valid: an integer from 1 to 1000000');
    assert.throws(
      () => readConfig({ MAX_CONNECTIONS: "1000" }, { openFileLimit: 1024 }),
      new ConfigError('MAX_CONNECTIONS="1000" is not valid: at most 952: the open file limit (1024) less DB_POOL_MAX (0) and 72 descriptors the process keeps'),
    );
    assert.throws(
      () => readConfig({}, { openFileLimit: 64 }),
      new ConfigError("the open file limit (64) leaves no descriptors for connections after DB_POOL_MAX (0): raise it (ulimit -n)"),
    );
  });

  it("refuses MAX_CONNECTIONS_PER_ADDRESS above MAX_CONNECTIONS", () => {
    const error = assertRefused({ MAX_CONNECTIONS: "10", MAX_CONNECTIONS_PER_ADDRESS: "11" }, "MAX_CONNECTIONS_PER_ADDRESS");
    assert.equal(error.message, 'MAX_CONNECTIONS_PER_ADDRESS="11" is not valid: at most MAX_CONNECTIONS (10)');
  });

  it("turns the rate limit off with RATE_LIMIT_RPS=0", () => {
    assert.equal(readConfig({ RATE_LIMIT_RPS: "0" }).rateLimit, undefined);
  });

  it("reads the failed-authentication budget: 60 per minute by default, the burst defaulting to the per-minute figure, 0 turns it off", () => {
    assert.deepEqual(readConfig({}).failedAuth, { perMinute: 60, burst: 60 });
    assert.deepEqual(readConfig({ AUTH_FAILURES_PER_MINUTE: "30" }).failedAuth, { perMinute: 30, burst: 30 });
    assert.deepEqual(readConfig({ AUTH_FAILURES_PER_MINUTE: "30", AUTH_FAILURES_BURST: "5" }).failedAuth, { perMinute: 30, burst: 5 });
    assert.equal(readConfig({ AUTH_FAILURES_PER_MINUTE: "0" }).failedAuth, undefined);
  });

  it("shares the limits through Redis only with REDIS_URL, under REDIS_KEY_PREFIX", () => {
    assert.equal(readConfig({}).redis, undefined);
    assert.equal(readConfig({ REDIS_URL: "" }).redis, undefined);
    assert.deepEqual(readConfig({ REDIS_URL: "redis://127.0.0.1:6379" }).redis, { url: "redis://127.0.0.1:6379", keyPrefix: "payments:limits" });
    assert.deepEqual(readConfig({ REDIS_URL: "rediss://:pw@cache.internal:6380/2", REDIS_KEY_PREFIX: "pay-eu:rl" }).redis, {
      url: "rediss://:pw@cache.internal:6380/2",
      keyPrefix: "pay-eu:rl",
    });
  });

  it("raises the default REQUEST_TIMEOUT_MS to a longer HEADERS_TIMEOUT_MS", () => {
    assert.equal(readConfig({ HEADERS_TIMEOUT_MS: "60000" }).limits.requestTimeoutMs, 60_000);
  });

  it("says what REQUEST_TIMEOUT_MS must be when it is shorter than HEADERS_TIMEOUT_MS", () => {
    const error = assertRefused({ HEADERS_TIMEOUT_MS: "5000", REQUEST_TIMEOUT_MS: "4000" }, "REQUEST_TIMEOUT_MS");
    assert.equal(error.message, 'REQUEST_TIMEOUT_MS="4000" is not valid: at least HEADERS_TIMEOUT_MS (5000)');
  });

  it("leaves the database unset without DATABASE_URL: the in-memory stores", () => {
    assert.equal(readConfig({}).database, undefined);
  });

  it("reads the database settings with their defaults", () => {
    assert.deepEqual(readConfig({ DATABASE_URL: dbUrl }).database, {
      url: dbUrl,
      migrateOnStart: true,
      poolMax: 10,
      statementTimeoutMs: 5000,
      lockTimeoutMs: 2000,
      unreadyAfterMs: 30_000,
    });
    assert.deepEqual(
      readConfig({ DATABASE_URL: dbUrl, MIGRATE_ON_START: "false", DB_POOL_MAX: "25", DB_STATEMENT_TIMEOUT_MS: "1500" })
        .database,
      { url: dbUrl, migrateOnStart: false, poolMax: 25, statementTimeoutMs: 1500, lockTimeoutMs: 1500, unreadyAfterMs: 30_000 },
    );
    assert.equal(readConfig({ DATABASE_URL: dbUrl, DB_LOCK_TIMEOUT_MS: "750" }).database?.lockTimeoutMs, 750);
    assert.equal(readConfig({ DATABASE_URL: dbUrl, DB_UNREADY_AFTER_MS: "5000" }).database?.unreadyAfterMs, 5000);
  });

  /** The settings this suite covers; other settings have their own tests. */
  const core = ({ host, port, basePath, publicUrl, apiKeys, processors, pageTokenSecret, maxBodyBytes }: Config) =>
    ({ host, port, basePath, publicUrl, apiKeys, processors, pageTokenSecret, maxBodyBytes });

  it("uses the defaults for an empty environment", () => {
    assert.deepEqual(core(readConfig({})), {
      host: "127.0.0.1",
      port: 8080,
      basePath: "/v1",
      publicUrl: "http://127.0.0.1:8080",
      apiKeys: undefined,
      processors: [],
      pageTokenSecret: undefined,
      maxBodyBytes: 64 * 1024,
    });
  });

  it("reads every variable", () => {
    const secret = "s".repeat(32);
    assert.deepEqual(
      core(readConfig({
        HOST: "0.0.0.0",
        PORT: "0",
        BASE_PATH: "",
        PUBLIC_URL: "https://pay.example.com/",
        API_KEYS: ` merchantA:${goodKeyA} , merchant.b-2:${goodKeyB}`,
        PAYMENT_PROCESSORS: "opay, flutterwave ,",
        PAGE_TOKEN_SECRET: secret,
      })),
      {
        host: "0.0.0.0",
        port: 0,
        basePath: "",
        publicUrl: "https://pay.example.com",
        apiKeys: [
          { merchantId: "merchantA", key: goodKeyA },
          { merchantId: "merchant.b-2", key: goodKeyB },
        ],
        processors: ["opay", "flutterwave"],
        pageTokenSecret: secret,
        maxBodyBytes: 64 * 1024,
      },
    );
  });

  const derivedUrls: { env: Record<string, string>; want: string }[] = [
    { env: { PORT: "9000" }, want: "http://127.0.0.1:9000" },
    { env: { HOST: "::1", PORT: "9000" }, want: "http://[::1]:9000" },
    { env: { PUBLIC_URL: "http://localhost:3000" }, want: "http://localhost:3000" },
  ];
  for (const { env, want } of derivedUrls) {
    it(`sets publicUrl ${want} for ${JSON.stringify(env)}`, () => {
      assert.equal(readConfig(env).publicUrl, want);
    });
  }

  it("accepts nested base paths and unset API_KEYS spelled as blank", () => {
    assert.equal(readConfig({ BASE_PATH: "/api/v1" }).basePath, "/api/v1");
    assert.equal(readConfig({ API_KEYS: "  " }).apiKeys, undefined);
  });

  const bad: { name: string; env: Record<string, string>; variable: string }[] = [
    { name: "PORT=abc", env: { PORT: "abc" }, variable: "PORT" },
    { name: "PORT=70000", env: { PORT: "70000" }, variable: "PORT" },
    { name: "PORT=-1", env: { PORT: "-1" }, variable: "PORT" },
    { name: "PORT=80.5", env: { PORT: "80.5" }, variable: "PORT" },
    { name: "BASE_PATH=v1", env: { BASE_PATH: "v1" }, variable: "BASE_PATH" },
    { name: "BASE_PATH=/v1/", env: { BASE_PATH: "/v1/" }, variable: "BASE_PATH" },
    { name: "BASE_PATH=/", env: { BASE_PATH: "/" }, variable: "BASE_PATH" },
    { name: "BASE_PATH=/v 1", env: { BASE_PATH: "/v 1" }, variable: "BASE_PATH" },
    { name: "PUBLIC_URL=ftp://x", env: { PUBLIC_URL: "ftp://x" }, variable: "PUBLIC_URL" },
    { name: "PUBLIC_URL=pay.example.com", env: { PUBLIC_URL: "pay.example.com" }, variable: "PUBLIC_URL" },
    { name: "PUBLIC_URL with a query", env: { PUBLIC_URL: "https://pay.example.com?x=1" }, variable: "PUBLIC_URL" },
    { name: "API_KEYS=nocolon", env: { API_KEYS: "nocolon" }, variable: "API_KEYS" },
    { name: "API_KEYS=a:short", env: { API_KEYS: "a:short" }, variable: "API_KEYS" },
    { name: "API_KEYS with an empty merchant", env: { API_KEYS: `:${goodKeyA}` }, variable: "API_KEYS" },
    { name: "API_KEYS with a bad merchant name", env: { API_KEYS: `mer chant:${goodKeyA}` }, variable: "API_KEYS" },
    { name: "API_KEYS with an empty entry", env: { API_KEYS: `a:${goodKeyA},` }, variable: "API_KEYS" },
    { name: "API_KEYS with a duplicate key", env: { API_KEYS: `a:${goodKeyA},b:${goodKeyA}` }, variable: "API_KEYS" },
    { name: "PAYMENT_PROCESSORS=Card!", env: { PAYMENT_PROCESSORS: "Card!" }, variable: "PAYMENT_PROCESSORS" },
    { name: "PAYMENT_PROCESSORS=card (a built-in)", env: { PAYMENT_PROCESSORS: "card" }, variable: "PAYMENT_PROCESSORS" },
    // A payment method name is at most 32 characters (the proto's payment_method_name shape).
    { name: "PAYMENT_PROCESSORS with a name of 33 characters", env: { PAYMENT_PROCESSORS: "p".repeat(33) }, variable: "PAYMENT_PROCESSORS" },
    { name: "PAYMENT_PROCESSORS with a duplicate", env: { PAYMENT_PROCESSORS: "opay,opay" }, variable: "PAYMENT_PROCESSORS" },
    { name: "PAGE_TOKEN_SECRET=short", env: { PAGE_TOKEN_SECRET: "short" }, variable: "PAGE_TOKEN_SECRET" },
    { name: "DATABASE_URL=mysql://x", env: { DATABASE_URL: "mysql://x/db" }, variable: "DATABASE_URL" },
    { name: "CHECKOUT_TTL=24 (no unit)", env: { CHECKOUT_TTL: "24" }, variable: "CHECKOUT_TTL" },
    { name: "CHECKOUT_TTL=0s", env: { CHECKOUT_TTL: "0s" }, variable: "CHECKOUT_TTL" },
    { name: "CHECKOUT_TTL=31d", env: { CHECKOUT_TTL: "31d" }, variable: "CHECKOUT_TTL" },
    { name: "CHECKOUT_TTL=1.5h", env: { CHECKOUT_TTL: "1.5h" }, variable: "CHECKOUT_TTL" },
    { name: "MAX_PAYMENT_ATTEMPTS=0", env: { MAX_PAYMENT_ATTEMPTS: "0" }, variable: "MAX_PAYMENT_ATTEMPTS" },
    { name: "MAX_PAYMENT_ATTEMPTS=21", env: { MAX_PAYMENT_ATTEMPTS: "21" }, variable: "MAX_PAYMENT_ATTEMPTS" },
    { name: "CHECKOUT_SECRET=short", env: { CHECKOUT_SECRET: "short" }, variable: "CHECKOUT_SECRET" },
    { name: "HEADERS_TIMEOUT_MS=50", env: { HEADERS_TIMEOUT_MS: "50" }, variable: "HEADERS_TIMEOUT_MS" },
    { name: "HEADERS_TIMEOUT_MS=10s", env: { HEADERS_TIMEOUT_MS: "10s" }, variable: "HEADERS_TIMEOUT_MS" },
    { name: "REQUEST_TIMEOUT_MS=-1", env: { REQUEST_TIMEOUT_MS: "-1" }, variable: "REQUEST_TIMEOUT_MS" },
    { name: "IDLE_TIMEOUT_MS=3600001", env: { IDLE_TIMEOUT_MS: "3600001" }, variable: "IDLE_TIMEOUT_MS" },
    { name: "MAX_CONCURRENT_STREAMS=0", env: { MAX_CONCURRENT_STREAMS: "0" }, variable: "MAX_CONCURRENT_STREAMS" },
    { name: "MAX_CONCURRENT_STREAMS=lots", env: { MAX_CONCURRENT_STREAMS: "lots" }, variable: "MAX_CONCURRENT_STREAMS" },
    { name: "WRITE_TIMEOUT_MS=50", env: { WRITE_TIMEOUT_MS: "50" }, variable: "WRITE_TIMEOUT_MS" },
    { name: "MAX_PIPELINED_REQUESTS=0", env: { MAX_PIPELINED_REQUESTS: "0" }, variable: "MAX_PIPELINED_REQUESTS" },
    { name: "MAX_UNSENT_BYTES=1000", env: { MAX_UNSENT_BYTES: "1000" }, variable: "MAX_UNSENT_BYTES" },
    { name: "MAX_CONNECTIONS=0", env: { MAX_CONNECTIONS: "0" }, variable: "MAX_CONNECTIONS" },
    { name: "MAX_CONNECTIONS_PER_ADDRESS=0", env: { MAX_CONNECTIONS_PER_ADDRESS: "0" }, variable: "MAX_CONNECTIONS_PER_ADDRESS" },
    { name: "RATE_LIMIT_RPS=1.5", env: { RATE_LIMIT_RPS: "1.5" }, variable: "RATE_LIMIT_RPS" },
    { name: "RATE_LIMIT_RPS=2000000", env: { RATE_LIMIT_RPS: "2000000" }, variable: "RATE_LIMIT_RPS" },
    { name: "RATE_LIMIT_BURST=0", env: { RATE_LIMIT_BURST: "0" }, variable: "RATE_LIMIT_BURST" },
    { name: "AUTH_FAILURES_PER_MINUTE=1.5", env: { AUTH_FAILURES_PER_MINUTE: "1.5" }, variable: "AUTH_FAILURES_PER_MINUTE" },
    { name: "AUTH_FAILURES_BURST=0", env: { AUTH_FAILURES_BURST: "0" }, variable: "AUTH_FAILURES_BURST" },
    { name: "REDIS_URL=http://x", env: { REDIS_URL: "http://cache:6379" }, variable: "REDIS_URL" },
    { name: "REDIS_URL=redis:// (no host)", env: { REDIS_URL: "redis://" }, variable: "REDIS_URL" },
    { name: "REDIS_KEY_PREFIX with a space", env: { REDIS_URL: "redis://cache", REDIS_KEY_PREFIX: "pay ments" }, variable: "REDIS_KEY_PREFIX" },
    { name: "SHUTDOWN_GRACE_MS=600001", env: { SHUTDOWN_GRACE_MS: "600001" }, variable: "SHUTDOWN_GRACE_MS" },
    { name: "SHUTDOWN_DELAY_MS=soon", env: { SHUTDOWN_DELAY_MS: "soon" }, variable: "SHUTDOWN_DELAY_MS" },
    { name: "MIGRATE_ON_START=yes", env: { DATABASE_URL: dbUrl, MIGRATE_ON_START: "yes" }, variable: "MIGRATE_ON_START" },
    { name: "DB_POOL_MAX=0", env: { DATABASE_URL: dbUrl, DB_POOL_MAX: "0" }, variable: "DB_POOL_MAX" },
    { name: "DB_POOL_MAX=ten", env: { DATABASE_URL: dbUrl, DB_POOL_MAX: "ten" }, variable: "DB_POOL_MAX" },
    { name: "DB_STATEMENT_TIMEOUT_MS=50", env: { DATABASE_URL: dbUrl, DB_STATEMENT_TIMEOUT_MS: "50" }, variable: "DB_STATEMENT_TIMEOUT_MS" },
    { name: "DB_LOCK_TIMEOUT_MS=5", env: { DATABASE_URL: dbUrl, DB_LOCK_TIMEOUT_MS: "5" }, variable: "DB_LOCK_TIMEOUT_MS" },
    { name: "DB_UNREADY_AFTER_MS=500", env: { DATABASE_URL: dbUrl, DB_UNREADY_AFTER_MS: "500" }, variable: "DB_UNREADY_AFTER_MS" },
    {
      name: "DB_LOCK_TIMEOUT_MS longer than DB_STATEMENT_TIMEOUT_MS",
      env: { DATABASE_URL: dbUrl, DB_STATEMENT_TIMEOUT_MS: "1000", DB_LOCK_TIMEOUT_MS: "1500" },
      variable: "DB_LOCK_TIMEOUT_MS",
    },
    {
      name: "DB_STATEMENT_TIMEOUT_MS=1.5",
      env: { DATABASE_URL: dbUrl, DB_STATEMENT_TIMEOUT_MS: "1.5" },
      variable: "DB_STATEMENT_TIMEOUT_MS",
    },
  ];
  for (const { name, env, variable } of bad) {
    it(`refuses ${name} with a ConfigError naming ${variable}`, () => {
      assertRefused(env, variable);
    });
  }

  // Configuration errors end up in logs: they must not carry the secrets.
  const secrets: { name: string; env: Record<string, string>; variable: string; secret: string }[] = [
    { name: "a key given without a merchant", env: { API_KEYS: goodKeyA }, variable: "API_KEYS", secret: goodKeyA.slice(0, 12) },
    { name: "a key after an empty merchant", env: { API_KEYS: `:${goodKeyA}` }, variable: "API_KEYS", secret: goodKeyA },
    { name: "a short key", env: { API_KEYS: "a:short-secret" }, variable: "API_KEYS", secret: "short-secret" },
    { name: "a duplicate key", env: { API_KEYS: `a:${goodKeyA},b:${goodKeyA}` }, variable: "API_KEYS", secret: goodKeyA },
    { name: "a short page-token secret", env: { PAGE_TOKEN_SECRET: "hunter2-hunter2" }, variable: "PAGE_TOKEN_SECRET", secret: "hunter2" },
    { name: "a database password", env: { DATABASE_URL: "mysql://app:s3cr3t-pw@db/x" }, variable: "DATABASE_URL", secret: "s3cr3t-pw" },
    { name: "a Redis password", env: { REDIS_URL: "http://:s3cr3t-pw@cache:6379" }, variable: "REDIS_URL", secret: "s3cr3t-pw" },
  ];
  for (const { name, env, variable, secret } of secrets) {
    it(`does not echo ${name} in the error`, () => {
      const error = assertRefused(env, variable);
      assert.ok(!error.message.includes(secret), `message leaks the secret: ${error.message}`);
    });
  }
});

describe("readConfig: CORS_ALLOWED_ORIGINS", () => {
  it("is off when unset or blank", () => {
    assert.equal(readConfig({}).corsAllowedOrigins, undefined);
    assert.equal(readConfig({ CORS_ALLOWED_ORIGINS: "  " }).corsAllowedOrigins, undefined);
  });

  it('reads "*" as any origin', () => {
    assert.equal(readConfig({ CORS_ALLOWED_ORIGINS: "*" }).corsAllowedOrigins, "*");
    assert.equal(readConfig({ CORS_ALLOWED_ORIGINS: " * " }).corsAllowedOrigins, "*");
  });

  it("reads a list of exact origins, spaces around entries ignored", () => {
    assert.deepEqual(readConfig({ CORS_ALLOWED_ORIGINS: "https://shop.example.com" }).corsAllowedOrigins, ["https://shop.example.com"]);
    assert.deepEqual(
      readConfig({ CORS_ALLOWED_ORIGINS: " https://shop.example.com , http://localhost:5173,http://127.0.0.1:8081,http://[::1]:3000" }).corsAllowedOrigins,
      ["https://shop.example.com", "http://localhost:5173", "http://127.0.0.1:8081", "http://[::1]:3000"],
    );
  });

  const refused: { name: string; value: string; browserSends?: string }[] = [
    { name: "a trailing slash", value: "https://shop.example.com/", browserSends: "https://shop.example.com" },
    { name: "a path", value: "https://shop.example.com/app", browserSends: "https://shop.example.com" },
    { name: "a query", value: "https://shop.example.com?x=1", browserSends: "https://shop.example.com" },
    { name: "upper case", value: "https://Shop.Example.com", browserSends: "https://shop.example.com" },
    { name: "the default port", value: "https://shop.example.com:443", browserSends: "https://shop.example.com" },
    { name: "user info", value: "https://user@shop.example.com", browserSends: "https://shop.example.com" },
    { name: "a host without a scheme", value: "shop.example.com" },
    { name: "a wildcard subdomain", value: "https://*.example.com" },
    { name: "a non-HTTP scheme", value: "ftp://shop.example.com" },
    { name: 'the "null" origin (sandboxed frames, files)', value: "null" },
    { name: '"*" inside a list', value: "https://shop.example.com,*" },
    { name: "an empty entry", value: "https://shop.example.com,,http://localhost:5173" },
  ];
  for (const { name, value, browserSends } of refused) {
    it(`refuses ${name}${browserSends ? ", naming the origin a browser sends" : ""}`, () => {
      const error = assertRefused({ CORS_ALLOWED_ORIGINS: value }, "CORS_ALLOWED_ORIGINS");
      if (browserSends) assert.ok(error.message.endsWith(`a browser on that page sends Origin: ${browserSends}`), error.message);
      else assert.ok(!error.message.includes("a browser on that page sends"), error.message);
    });
  }
});

describe("readConfig: TEST_HELPERS, TEST_CLOCK and TEST_MERCHANTS_MAX", () => {
  const helpers = (enabled: boolean, clock: boolean, maxMerchants = 10_000) => ({ enabled, clock, maxMerchants });

  it("turns the helpers on by default in memory mode on a loopback address only; off with DATABASE_URL; the clock is off by default", () => {
    assert.deepEqual(readConfig({}).testHelpers, helpers(true, false));
    assert.deepEqual(readConfig({ TEST_HELPERS: "", TEST_CLOCK: "" }).testHelpers, helpers(true, false));
    for (const HOST of ["localhost", "::1", "127.0.0.2"]) assert.deepEqual(readConfig({ HOST }).testHelpers, helpers(true, false), HOST);
    // Other machines can reach these: the sandbox is asked for, never assumed (the Docker image listens on 0.0.0.0).
    for (const HOST of ["0.0.0.0", "::", "10.0.0.5"]) assert.deepEqual(readConfig({ HOST }).testHelpers, helpers(false, false), HOST);
    assert.deepEqual(readConfig({ DATABASE_URL: dbUrl }).testHelpers, helpers(false, false));
  });

  it("takes true and false either way", () => {
    assert.deepEqual(readConfig({ TEST_HELPERS: "false" }).testHelpers, helpers(false, false));
    assert.deepEqual(readConfig({ TEST_CLOCK: "true" }).testHelpers, helpers(true, true));
    assert.deepEqual(readConfig({ HOST: "0.0.0.0", TEST_HELPERS: "true" }).testHelpers, helpers(true, false));
    assert.deepEqual(readConfig({ DATABASE_URL: dbUrl, TEST_HELPERS: "true" }).testHelpers, helpers(true, false));
    assert.deepEqual(readConfig({ DATABASE_URL: dbUrl, TEST_HELPERS: "true", TEST_CLOCK: "true" }).testHelpers, helpers(true, true));
  });

  it("reads TEST_MERCHANTS_MAX (1-10000000, default 10000)", () => {
    assert.equal(readConfig({ TEST_MERCHANTS_MAX: "25" }).testHelpers.maxMerchants, 25);
    for (const value of ["0", "10000001", "lots"]) assertRefused({ TEST_MERCHANTS_MAX: value }, "TEST_MERCHANTS_MAX");
  });

  it("refuses other values, and a test clock without the helpers", () => {
    for (const value of ["1", "yes", "TRUE", " true"]) {
      assertRefused({ TEST_HELPERS: value }, "TEST_HELPERS");
      assertRefused({ TEST_CLOCK: value }, "TEST_CLOCK");
    }
    assert.equal(
      assertRefused({ TEST_HELPERS: "false", TEST_CLOCK: "true" }, "TEST_CLOCK").message,
      'TEST_CLOCK="true" is not valid: false unless TEST_HELPERS=true',
    );
    assert.equal(
      assertRefused({ DATABASE_URL: dbUrl, TEST_CLOCK: "true" }, "TEST_CLOCK").message,
      'TEST_CLOCK="true" is not valid: false unless TEST_HELPERS=true (with DATABASE_URL it defaults to false)',
    );
    assert.equal(
      assertRefused({ HOST: "0.0.0.0", TEST_CLOCK: "true" }, "TEST_CLOCK").message,
      'TEST_CLOCK="true" is not valid: false unless TEST_HELPERS=true (with HOST 0.0.0.0, not a loopback address, it defaults to false)',
    );
  });
});

describe("readConfig: Paystack", () => {
  const key = "sk_test_" + "0123456789abcdef".repeat(2) + "01234567";

  it("leaves Paystack off without PAYSTACK_SECRET_KEY", () => {
    const config = readConfig({ PAYMENT_PROCESSORS: "opay" });
    assert.equal(config.paystack, undefined);
    assert.deepEqual(config.processors, ["opay"]);
  });

  it("with a key, offers paystack after PAYMENT_PROCESSORS, at https://api.paystack.co unless PAYSTACK_BASE_URL says otherwise", () => {
    const config = readConfig({ PAYMENT_PROCESSORS: "opay", PAYSTACK_SECRET_KEY: key });
    assert.deepEqual(config.paystack, { secretKey: key, baseUrl: "https://api.paystack.co" });
    assert.deepEqual(config.processors, ["opay", "paystack"]);
    const live = "sk_live_" + "a".repeat(40);
    assert.deepEqual(readConfig({ PAYSTACK_SECRET_KEY: live, PAYSTACK_BASE_URL: "http://127.0.0.1:4010/" }).paystack, {
      secretKey: live,
      baseUrl: "http://127.0.0.1:4010",
    });
  });

  const refused: { name: string; env: Record<string, string>; variable: string }[] = [
    { name: "a public key", env: { PAYSTACK_SECRET_KEY: "pk_test_" + "a".repeat(40) }, variable: "PAYSTACK_SECRET_KEY" },
    { name: "a key with a space", env: { PAYSTACK_SECRET_KEY: "sk_test_abc def0123456789abcdef0123" }, variable: "PAYSTACK_SECRET_KEY" },
    { name: "a short key", env: { PAYSTACK_SECRET_KEY: "sk_live_abc" }, variable: "PAYSTACK_SECRET_KEY" },
    { name: "a base URL without a key", env: { PAYSTACK_BASE_URL: "https://api.paystack.co" }, variable: "PAYSTACK_BASE_URL" },
    { name: "plain http to another machine", env: { PAYSTACK_SECRET_KEY: key, PAYSTACK_BASE_URL: "http://api.paystack.co" }, variable: "PAYSTACK_BASE_URL" },
    { name: "a base URL with credentials", env: { PAYSTACK_SECRET_KEY: key, PAYSTACK_BASE_URL: "https://u:p@api.paystack.co" }, variable: "PAYSTACK_BASE_URL" },
    { name: "a base URL with a query", env: { PAYSTACK_SECRET_KEY: key, PAYSTACK_BASE_URL: "https://api.paystack.co/?x=1" }, variable: "PAYSTACK_BASE_URL" },
    { name: "paystack in PAYMENT_PROCESSORS", env: { PAYMENT_PROCESSORS: "paystack" }, variable: "PAYMENT_PROCESSORS" },
  ];
  for (const { name, env, variable } of refused) {
    it(`refuses ${name}, naming ${variable} and never the key`, () => {
      const error = assertRefused(env, variable);
      if (env.PAYSTACK_SECRET_KEY) assert.ok(!error.message.includes(env.PAYSTACK_SECRET_KEY.slice(8)), error.message);
    });
  }
});

describe("settingNames", () => {
  it("are exactly the variables readConfig reads (the names startTestServer takes)", () => {
    const source = readFileSync(new URL("../../src/config.ts", import.meta.url), "utf8");
    const read = new Set([...source.matchAll(/env\.([A-Z][A-Z_]+)|\(\s*env,\s*"([A-Z][A-Z_]+)"/g)].map((match) => match[1] ?? match[2]));
    assert.deepEqual([...settingNames].sort(), [...read].sort());
  });

  it("include TEST_HELPERS and TEST_CLOCK, which the configuration table (docs/configuration.md) describes", () => {
    const readme = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    for (const name of ["TEST_HELPERS", "TEST_CLOCK"] as const) {
      assert.ok(settingNames.includes(name));
      assert.match(readme, new RegExp(`^\\| \`${name}\` \\|`, "m"), name);
    }
  });
});
