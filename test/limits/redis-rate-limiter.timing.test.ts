import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, describe, it } from "node:test";
import { createSystemClock } from "../../src/lib/clock.js";
import { createMemoryRateLimiter } from "../../src/limits/memory-rate-limiter.js";
import type { RateLimit, RateLimiter } from "../../src/limits/rate-limiter.js";
import { createRedisConnection, type RedisConnection, type RedisStateChange } from "../../src/limits/redis-connection.js";
import { createRedisRateLimiter, redisWindow } from "../../src/limits/redis-rate-limiter.js";
import { keysUnder, randomPrefix, redisUnavailable, testRedisUrl } from "../support/redis.js";

const skip = await redisUnavailable();
const clock = createSystemClock();
const hash = (text: string) => createHash("sha256").update(text).digest("hex");

describe("redisWindow", () => {
  const cases: { limit: RateLimit; want: ReturnType<typeof redisWindow> }[] = [
    { limit: { ratePerSecond: 100, burst: 200 }, want: { durationSeconds: 2, points: 200 } },
    { limit: { ratePerSecond: 100, burst: 100 }, want: { durationSeconds: 1, points: 100 } },
    // A burst below one second's worth cannot be kept in whole seconds: one second's worth.
    { limit: { ratePerSecond: 100, burst: 10 }, want: { durationSeconds: 1, points: 100 } },
    { limit: { ratePerSecond: 30, burst: 50 }, want: { durationSeconds: 2, points: 60 } },
    { limit: { ratePerSecond: 1, burst: 2 }, want: { durationSeconds: 2, points: 2 } },
    // AUTH_FAILURES_PER_MINUTE=60, AUTH_FAILURES_BURST=60: 60 per minute.
    { limit: { ratePerSecond: 1, burst: 60 }, want: { durationSeconds: 60, points: 60 } },
    { limit: { ratePerSecond: 10 / 60, burst: 10 }, want: { durationSeconds: 60, points: 10 } },
  ];
  for (const { limit, want } of cases) {
    it(`${limit.ratePerSecond.toFixed(3)}/s, burst ${limit.burst} → ${want.points} per ${want.durationSeconds} s`, () => {
      assert.deepEqual(redisWindow(limit), want);
    });
  }
});

/** sharedLimiters builds n instances as n processes would: a connection (ioredis client) and a limiter each. */
async function sharedLimiters(n: number, prefix: string, limit: RateLimit) {
  const changes: RedisStateChange[] = [];
  const connections: RedisConnection[] = [];
  const limiters: RateLimiter[] = [];
  for (let i = 0; i < n; i++) {
    // What this suite checks is the shared arithmetic, not Redis's latency (redis-outage.timing.test.ts
    // checks the default 200 ms backstop): on a loaded machine a command flat out can take longer.
    const connection = createRedisConnection({ url: testRedisUrl, clock, commandTimeoutMs: 2000, onChange: (change) => changes.push(change) });
    await connection.ready();
    assert.deepEqual(connection.state(), { backend: "redis" });
    connections.push(connection);
    limiters.push(
      createRedisRateLimiter({ connection, keyPrefix: prefix, limit, fallback: createMemoryRateLimiter({ ...limit, clock }) }),
    );
  }
  return { limiters, changes, close: () => Promise.all(connections.map((c) => c.close())) };
}

/** flatOut has every limiter consume key as fast as answers come back, `loops` calls in flight each, for ms. */
async function flatOut(limiters: RateLimiter[], key: string, ms: number, loops: number) {
  let accepted = 0;
  let refused = 0;
  let lastSent = 0;
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    limiters.flatMap((limiter) =>
      Array.from({ length: loops }, async () => {
        while (performance.now() < deadline) {
          lastSent = performance.now();
          if ((await limiter.consume(key)).allowed) accepted++;
          else refused++;
        }
      }),
    ),
  );
  // The limit counts calls by when they reach Redis, so the figures use when the last was sent:
  // on a loaded machine that can be well past ms (a window begun at 15.2 s is a ninth).
  return { accepted, refused, seconds: (performance.now() - started) / 1000, sentForSeconds: (lastSent - started) / 1000 };
}

describe("createRedisRateLimiter with several instances", { skip }, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(() => Promise.all(cleanups.map((cleanup) => cleanup())));

  it("keeps one limit for three instances going flat out on one key: RPS × T + the initial burst, within 10 %", async (t) => {
    const limit = { ratePerSecond: 100, burst: 200 };
    const seconds = 15;
    const shared = await sharedLimiters(3, `${randomPrefix()}:api-key`, limit);
    cleanups.push(shared.close);

    const run = await flatOut(shared.limiters, hash("one key"), seconds * 1000, 2);

    // The token bucket would accept burst + rate × T. The Redis window
    // accepts its points at the start of every window begun within T: with
    // T = 15 s and 200 points per 2 s, 8 windows (0, 2, …, 14 s) = 1600,
    // i.e. rate × T plus the 100 left in the window still running at the end.
    // T is how long calls were sent for, measured.
    const { durationSeconds, points } = redisWindow(limit);
    const bucketFigure = Math.round(limit.burst + limit.ratePerSecond * run.sentForSeconds);
    const windowFigure = points * Math.ceil(run.sentForSeconds / durationSeconds);
    t.diagnostic(
      `3 instances, ${seconds} s flat out (the last call sent at ${run.sentForSeconds.toFixed(2)} s): ${run.accepted} accepted, ${run.refused} refused (${Math.round(run.refused / run.seconds)}/s) ` +
        `in ${run.seconds.toFixed(2)} s; ${(run.accepted / run.seconds).toFixed(1)}/s accepted; ` +
        `token-bucket figure ${bucketFigure} (${((run.accepted / bucketFigure - 1) * 100).toFixed(1)} %), window figure ${windowFigure}`,
    );
    assert.deepEqual(shared.changes, [], "Redis must not have been lost during the run (every answer from Redis)");
    assert.ok(Math.abs(run.accepted - bucketFigure) <= 0.1 * bucketFigure, `accepted ${run.accepted}, want ${bucketFigure} ± 10 %`);
    assert.ok(Math.abs(run.accepted - windowFigure) <= points, `accepted ${run.accepted}, want ${windowFigure} ± one window`);
    assert.ok(run.refused > 10 * run.accepted, "the load must be far above the limit to measure it");
  });

  it("refuses with the time left in the window, and stores only prefixed hashes", async () => {
    const prefix = randomPrefix();
    const shared = await sharedLimiters(2, `${prefix}:api-key`, { ratePerSecond: 1, burst: 3 });
    cleanups.push(shared.close);
    const [a, b] = shared.limiters as [RateLimiter, RateLimiter];
    const apiKey = "sk_test_never_in_redis_0123456789";
    const key = hash(apiKey);
    assert.deepEqual(await a.consume(key), { allowed: true });
    assert.deepEqual(await b.consume(key), { allowed: true });
    assert.deepEqual(await a.consume(key), { allowed: true });
    const refused = await b.consume(key);
    assert.equal(refused.allowed, false);
    assert.ok(!refused.allowed && refused.retryAfterMs > 2000 && refused.retryAfterMs <= 3000, JSON.stringify(refused));
    // Another key has its own window.
    assert.deepEqual(await b.consume(hash("another key")), { allowed: true });

    const keys = await keysUnder(testRedisUrl, prefix);
    assert.deepEqual(keys, [`${prefix}:api-key:${hash("another key")}`, `${prefix}:api-key:${key}`].sort());
    assert.ok(keys.every((k) => !k.includes(apiKey)));
    await assert.rejects(a.consume(apiKey), TypeError, "a raw key must never be sent to Redis");
  });
});
