import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { silentLogger } from "../../src/lib/logger.js";
import { createLimiters } from "../../src/limits/create-limiters.js";
import { createManualClock } from "../support/manual-clock.js";
import { keysUnder, randomPrefix, redisUnavailable, testRedisUrl } from "../support/redis.js";

const redisSkip = await redisUnavailable();
const key = createHash("sha256").update("sk_test_factory").digest("hex");

describe("createLimiters", () => {
  it("keeps everything in this instance's memory without REDIS_URL", async () => {
    const clock = createManualClock();
    const limiters = await createLimiters(
      { rateLimit: { ratePerSecond: 1, burst: 2 }, failedAuth: { perMinute: 60, burst: 1 }, redis: undefined },
      { clock, log: silentLogger },
    );
    assert.deepEqual(limiters.describe(), { backend: "memory" });
    assert.deepEqual(limiters.apiKeys!.describe(), { backend: "memory" });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await limiters.apiKeys!.consume(key));
    assert.deepEqual(answers, [{ allowed: true }, { allowed: true }, { allowed: false, retryAfterMs: 1000 }]);
    await limiters.failedAuth.recordFailure("192.0.2.1");
    await limiters.failedAuth.recordFailure("192.0.2.1");
    assert.deepEqual(await limiters.failedAuth.check("192.0.2.1"), { allowed: false, retryAfterMs: 1000 });
    await limiters.close();
  });

  it("leaves the per-key limit out with RATE_LIMIT_RPS=0 and never blocks with AUTH_FAILURES_PER_MINUTE=0", async () => {
    const limiters = await createLimiters(
      { rateLimit: undefined, failedAuth: undefined, redis: undefined },
      { clock: createManualClock(), log: silentLogger },
    );
    assert.equal(limiters.apiKeys, undefined);
    for (let i = 0; i < 100; i++) await limiters.failedAuth.recordFailure("192.0.2.1");
    assert.deepEqual(await limiters.failedAuth.check("192.0.2.1"), { allowed: true });
    await limiters.close();
  });

  it("puts both limiters in Redis with REDIS_URL, each under its own prefix", { skip: redisSkip }, async () => {
    const prefix = randomPrefix();
    const limiters = await createLimiters(
      { rateLimit: { ratePerSecond: 1, burst: 2 }, failedAuth: { perMinute: 60, burst: 1 }, redis: { url: testRedisUrl, keyPrefix: prefix } },
      { clock: createManualClock(), log: silentLogger },
    );
    try {
      assert.deepEqual(limiters.describe(), { backend: "redis" });
      assert.deepEqual(limiters.apiKeys!.describe(), { backend: "redis" });
      assert.deepEqual(limiters.failedAuth.describe(), { backend: "redis" });
      assert.deepEqual(await limiters.apiKeys!.consume(key), { allowed: true });
      await limiters.failedAuth.recordFailure("192.0.2.1");
      const keys = await keysUnder(testRedisUrl, prefix);
      assert.equal(keys.length, 2);
      assert.equal(keys.filter((k) => k === `${prefix}:api-key:${key}`).length, 1);
      assert.equal(keys.filter((k) => /^test-[0-9a-f]+:failed-auth:[0-9a-f]{64}$/.test(k)).length, 1);
    } finally {
      await limiters.close();
    }
  });
});
