import type { Redis } from "ioredis";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { InsuranceRes, MemoryInsurance } from "./insurance-limiter.js";
import type { MemoryRateLimiter } from "./memory-rate-limiter.js";
import type { RateDecision, RateLimit, RateLimiter } from "./rate-limiter.js";
import type { RedisConnection } from "./redis-connection.js";
import { settleWithin } from "./settle-within.js";

/** RedisWindow is what rate-limiter-flexible enforces in Redis: points per window of whole seconds. */
export interface RedisWindow {
  durationSeconds: number;
  points: number;
}

/**
 * redisWindow turns "ratePerSecond sustained, bursts of burst" into a fixed
 * window rate-limiter-flexible can keep in Redis: a window as long as the
 * bucket takes to refill (burst / ratePerSecond s, whole seconds, at least 1)
 * holding ratePerSecond × that many points. A key going flat out then gets
 * exactly ratePerSecond on average, and after a quiet window it may send the
 * whole burst at once, as with the token bucket. The library keeps Redis
 * expiries in whole seconds, hence the rounding: the points equal burst
 * whenever burst is a whole multiple of ratePerSecond (the defaults, 100/200,
 * give 200 points per 2 s).
 */
export function redisWindow(limit: RateLimit): RedisWindow {
  const durationSeconds = Math.max(1, Math.round(limit.burst / limit.ratePerSecond));
  return { durationSeconds, points: Math.max(1, Math.round(limit.ratePerSecond * durationSeconds)) };
}

export interface RedisRateLimiterOptions {
  connection: RedisConnection;
  /** Prefix of this limiter's Redis keys ("<REDIS_KEY_PREFIX>:api-key"): a key is "<prefix>:<hash>". */
  keyPrefix: string;
  limit: RateLimit;
  /** Answers while Redis cannot: this instance's own buckets. */
  fallback: MemoryRateLimiter;
}

/** A key must be a hex digest (SHA-256 and the like): Redis is shared, so it never holds a secret. */
const hashedKey = /^[0-9a-f]{32,128}$/;

/**
 * createRedisRateLimiter keeps one limit per key for every instance that
 * shares the Redis: rate-limiter-flexible's RateLimiterRedis (one atomic
 * script per request: INCR with the window's expiry) over redisWindow(limit).
 * Its insuranceLimiter is the memory fallback, so a failing Redis call is
 * answered from memory at once and opens the connection's breaker; so does a
 * call that takes longer than the connection's commandTimeoutMs. While the
 * breaker is open consume goes straight to memory.
 */
export function createRedisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
  const { connection, fallback } = options;
  const window = redisWindow(options.limit);
  const redis = new RateLimiterRedis({
    storeClient: connection.client,
    keyPrefix: options.keyPrefix,
    points: window.points,
    duration: window.durationSeconds,
    // Fail over to the insurance at once instead of letting a command wait for a connection.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new MemoryInsurance(fallback),
  });

  return {
    async consume(key) {
      if (!hashedKey.test(key)) throw new TypeError("rate limiter keys must be hex digests, never a raw key or address");
      if (!connection.usable()) return fallback.take(key);
      const call: { answered?: boolean } = {};
      const outcome = await settleWithin(redis.consume(key, 1, call), connection.commandTimeoutMs);
      if (outcome.status === "late") {
        // Tell the insurance, should the call fail later, that memory has already answered.
        call.answered = true;
        connection.reportFailure(`a Redis command took longer than ${connection.commandTimeoutMs} ms`);
        return fallback.take(key);
      }
      const res = outcome.status === "fulfilled" ? outcome.value : outcome.reason;
      if (!(res instanceof RateLimiterRes)) {
        // Not a decision: the library and its insurance both failed. Memory decides.
        connection.reportFailure();
        return fallback.take(key);
      }
      if (res instanceof InsuranceRes) connection.reportFailure();
      return toDecision(outcome.status === "fulfilled", res);
    },
    describe: () => connection.state(),
  };
}

function toDecision(allowed: boolean, res: RateLimiterRes): RateDecision {
  return allowed ? { allowed: true } : { allowed: false, retryAfterMs: Math.max(1, res.msBeforeNext) };
}

/**
 * createRedisProbe asks Redis what the limiters ask (the same script, on the
 * key "<keyPrefix>:health" with a generous budget), for RedisConnection's
 * probe: a server that answers PING but refuses the script stays degraded
 * instead of flapping.
 */
export function createRedisProbe(keyPrefix: string): (client: Redis) => Promise<unknown> {
  let limiter: RateLimiterRedis | undefined;
  return (client) => {
    limiter ??= new RateLimiterRedis({ storeClient: client, keyPrefix, points: 1_000_000, duration: 60 });
    return limiter.consume("health");
  };
}
