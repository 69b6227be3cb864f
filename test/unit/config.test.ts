import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, readConfig, type Config } from "../../src/config.js";

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
    assert.deepEqual(defaults.limits, { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, idleTimeoutMs: 65_000, maxConcurrentStreams: 100 });
    assert.deepEqual(defaults.rateLimit, { ratePerSecond: 100, burst: 200 });
    assert.deepEqual(defaults.shutdown, { delayMs: 0, graceMs: 10_000 });
    const set = readConfig({
      HEADERS_TIMEOUT_MS: "2000",
      REQUEST_TIMEOUT_MS: "5000",
      IDLE_TIMEOUT_MS: "120000",
      MAX_CONCURRENT_STREAMS: "250",
      RATE_LIMIT_RPS: "5",
      RATE_LIMIT_BURST: "10",
      SHUTDOWN_DELAY_MS: "3000",
      SHUTDOWN_GRACE_MS: "0",
    });
    assert.deepEqual(set.limits, { headersTimeoutMs: 2000, requestTimeoutMs: 5000, idleTimeoutMs: 120_000, maxConcurrentStreams: 250 });
    assert.deepEqual(set.rateLimit, { ratePerSecond: 5, burst: 10 });
    assert.deepEqual(set.shutdown, { delayMs: 3000, graceMs: 0 });
  });

  it("turns the rate limit off with RATE_LIMIT_RPS=0", () => {
    assert.equal(readConfig({ RATE_LIMIT_RPS: "0" }).rateLimit, undefined);
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
    });
    assert.deepEqual(
      readConfig({ DATABASE_URL: dbUrl, MIGRATE_ON_START: "false", DB_POOL_MAX: "25", DB_STATEMENT_TIMEOUT_MS: "1500" })
        .database,
      { url: dbUrl, migrateOnStart: false, poolMax: 25, statementTimeoutMs: 1500 },
    );
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
        PAYMENT_PROCESSORS: "paystack, flutterwave ,",
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
        processors: ["paystack", "flutterwave"],
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
    { name: "PAYMENT_PROCESSORS with a duplicate", env: { PAYMENT_PROCESSORS: "paystack,paystack" }, variable: "PAYMENT_PROCESSORS" },
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
    { name: "RATE_LIMIT_RPS=1.5", env: { RATE_LIMIT_RPS: "1.5" }, variable: "RATE_LIMIT_RPS" },
    { name: "RATE_LIMIT_RPS=2000000", env: { RATE_LIMIT_RPS: "2000000" }, variable: "RATE_LIMIT_RPS" },
    { name: "RATE_LIMIT_BURST=0", env: { RATE_LIMIT_BURST: "0" }, variable: "RATE_LIMIT_BURST" },
    { name: "SHUTDOWN_GRACE_MS=600001", env: { SHUTDOWN_GRACE_MS: "600001" }, variable: "SHUTDOWN_GRACE_MS" },
    { name: "SHUTDOWN_DELAY_MS=soon", env: { SHUTDOWN_DELAY_MS: "soon" }, variable: "SHUTDOWN_DELAY_MS" },
    { name: "MIGRATE_ON_START=yes", env: { DATABASE_URL: dbUrl, MIGRATE_ON_START: "yes" }, variable: "MIGRATE_ON_START" },
    { name: "DB_POOL_MAX=0", env: { DATABASE_URL: dbUrl, DB_POOL_MAX: "0" }, variable: "DB_POOL_MAX" },
    { name: "DB_POOL_MAX=ten", env: { DATABASE_URL: dbUrl, DB_POOL_MAX: "ten" }, variable: "DB_POOL_MAX" },
    { name: "DB_STATEMENT_TIMEOUT_MS=50", env: { DATABASE_URL: dbUrl, DB_STATEMENT_TIMEOUT_MS: "50" }, variable: "DB_STATEMENT_TIMEOUT_MS" },
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
  ];
  for (const { name, env, variable, secret } of secrets) {
    it(`does not echo ${name} in the error`, () => {
      const error = assertRefused(env, variable);
      assert.ok(!error.message.includes(secret), `message leaks the secret: ${error.message}`);
    });
  }
});
