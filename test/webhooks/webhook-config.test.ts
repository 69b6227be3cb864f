import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { ConfigError, readConfig, readWebhookConfig } from "../../src/config.js";

describe("readWebhookConfig", () => {
  it("uses the defaults for an empty environment, and readConfig carries them", () => {
    const defaults = {
      timeoutMs: 10_000,
      retrySchedule: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      allowPrivateUrls: false,
      secretKey: undefined,
      concurrency: 32,
      concurrencyPerEndpoint: 4,
      concurrencyPerMerchant: 16,
      pollIntervalMs: 1000,
      workerThread: true,
      eventRetentionDays: 30,
    };
    assert.deepEqual(readWebhookConfig({}), defaults);
    assert.deepEqual(readConfig({ HOST: "0.0.0.0" }).webhooks, defaults);
    assert.deepEqual(readConfig({ DATABASE_URL: "postgres://u@127.0.0.1:5432/d" }).webhooks, defaults);
  });

  it("allows local receivers by default in the sandbox (memory mode on a loopback address), and takes false there", () => {
    assert.equal(readWebhookConfig({}, true).allowPrivateUrls, true);
    assert.equal(readConfig({}).webhooks.allowPrivateUrls, true);
    assert.equal(readConfig({ HOST: "::1" }).webhooks.allowPrivateUrls, true);
    assert.equal(readConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: "false" }).webhooks.allowPrivateUrls, false);
  });

  it("reads every variable", () => {
    const key = randomBytes(32);
    assert.deepEqual(
      readWebhookConfig({
        WEBHOOK_TIMEOUT_MS: "2500",
        WEBHOOK_RETRY_SCHEDULE: "1s,1m",
        WEBHOOK_ALLOW_PRIVATE_URLS: "true",
        WEBHOOK_SECRET_KEY: key.toString("base64"),
        WEBHOOK_CONCURRENCY: "8",
        WEBHOOK_CONCURRENCY_PER_ENDPOINT: "1",
        WEBHOOK_CONCURRENCY_PER_MERCHANT: "3",
        WEBHOOK_POLL_INTERVAL_MS: "250",
        WEBHOOK_WORKER_THREAD: "false",
        EVENT_RETENTION_DAYS: "90",
      }),
      {
        timeoutMs: 2500,
        retrySchedule: [1000, 60_000],
        allowPrivateUrls: true,
        secretKey: key,
        concurrency: 8,
        concurrencyPerEndpoint: 1,
        concurrencyPerMerchant: 3,
        pollIntervalMs: 250,
        workerThread: false,
        eventRetentionDays: 90,
      },
    );
    assert.deepEqual(readWebhookConfig({ WEBHOOK_SECRET_KEY: key.toString("hex") }).secretKey, key);
  });

  it("refuses bad values naming the variable, and never echoes the key", () => {
    const key = randomBytes(31).toString("base64");
    const cases: [Record<string, string>, string][] = [
      [{ WEBHOOK_TIMEOUT_MS: "99" }, "WEBHOOK_TIMEOUT_MS"],
      [{ WEBHOOK_TIMEOUT_MS: "60001" }, "WEBHOOK_TIMEOUT_MS"],
      [{ WEBHOOK_RETRY_SCHEDULE: "5s,soon" }, "WEBHOOK_RETRY_SCHEDULE"],
      [{ WEBHOOK_ALLOW_PRIVATE_URLS: "yes" }, "WEBHOOK_ALLOW_PRIVATE_URLS"],
      [{ WEBHOOK_SECRET_KEY: key }, "WEBHOOK_SECRET_KEY"],
      [{ WEBHOOK_CONCURRENCY: "0" }, "WEBHOOK_CONCURRENCY"],
      [{ WEBHOOK_CONCURRENCY_PER_ENDPOINT: "101" }, "WEBHOOK_CONCURRENCY_PER_ENDPOINT"],
      [{ WEBHOOK_CONCURRENCY: "8", WEBHOOK_CONCURRENCY_PER_MERCHANT: "9" }, "WEBHOOK_CONCURRENCY_PER_MERCHANT"],
      [{ WEBHOOK_POLL_INTERVAL_MS: "10" }, "WEBHOOK_POLL_INTERVAL_MS"],
      [{ EVENT_RETENTION_DAYS: "29" }, "EVENT_RETENTION_DAYS"],
      [{ EVENT_RETENTION_DAYS: "3651" }, "EVENT_RETENTION_DAYS"],
    ];
    for (const [env, variable] of cases) {
      assert.throws(
        () => readConfig(env),
        (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${variable}=`) && !error.message.includes(key),
        variable,
      );
    }
    assert.throws(() => readWebhookConfig({ WEBHOOK_RETRY_SCHEDULE: "1x" }), {
      message: 'WEBHOOK_RETRY_SCHEDULE="1x" is not valid: 1 to 20 comma-separated delays such as 5s,5m,30m,2h (units ms, s, m, h, d), each from 1ms to 7d',
    });
  });
});
