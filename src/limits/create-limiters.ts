import type { FailedAuthConfig, RateLimitConfig, RedisConfig } from "../config.js";
import type { Clock } from "../lib/clock.js";
import type { Logger } from "../lib/logger.js";
import { createFailedAuthThrottle, createOpenFailedAuthThrottle, type FailedAuthThrottle } from "./failed-auth-throttle.js";
import { createMemoryRateLimiter } from "./memory-rate-limiter.js";
import type { LimiterState, RateLimit, RateLimiter } from "./rate-limiter.js";
import type { RedisConnection, RedisConnectionOptions } from "./redis-connection.js";

/** LimitsConfig is the part of Config the limiters read. */
export interface LimitsConfig {
  rateLimit: RateLimitConfig | undefined;
  failedAuth: FailedAuthConfig | undefined;
  redis: RedisConfig | undefined;
}

export interface LimitersDeps {
  clock: Clock;
  log: Logger;
  /** Tests shorten the Redis timeouts and the recovery probe; production uses the defaults. */
  redisTimeouts?: Pick<RedisConnectionOptions, "commandTimeoutMs" | "connectTimeoutMs" | "probeIntervalMs">;
}

/** Limiters are every limit the service applies, built once at start by main.ts. */
export interface Limiters {
  /** Per-API-key limit (RATE_LIMIT_RPS, RATE_LIMIT_BURST); undefined when RATE_LIMIT_RPS=0. */
  apiKeys: RateLimiter | undefined;
  /** Failed authentications per client address (AUTH_FAILURES_PER_MINUTE, AUTH_FAILURES_BURST). */
  failedAuth: FailedAuthThrottle;
  /** Which backend decides now; both limiters share it. For /readyz detail. */
  describe(): LimiterState;
  /** Closes the Redis connection, if any. */
  close(): Promise<void>;
}

const component = "rate-limits";

/**
 * createLimiters makes the one choice of backend: Redis when REDIS_URL is
 * set (one limit across every instance, each limiter with its own key
 * prefix, one connection), else each instance's memory. It waits for the
 * first connection attempt (at most the connect timeout) so that the state
 * is known before the first request; a Redis that cannot be reached then or
 * later is logged once, and the limiters answer from memory until it is back.
 */
export async function createLimiters(config: LimitsConfig, deps: LimitersDeps): Promise<Limiters> {
  const { clock, log } = deps;
  const failedAuthLimit: RateLimit | undefined = config.failedAuth && {
    ratePerSecond: config.failedAuth.perMinute / 60,
    burst: config.failedAuth.burst,
  };
  const memory = (limit: RateLimit) => createMemoryRateLimiter({ ...limit, clock });

  let connection: RedisConnection | undefined;
  let limiter: (name: string, limit: RateLimit) => RateLimiter = (_name, limit) => memory(limit);
  if (config.redis) {
    // Loaded only here: ioredis and rate-limiter-flexible cost a start without REDIS_URL (a test sandbox) a tenth of a second.
    const [{ createRedisConnection }, { createRedisProbe, createRedisRateLimiter }] = await Promise.all([
      import("./redis-connection.js"),
      import("./redis-rate-limiter.js"),
    ]);
    const redis = config.redis;
    const shared = createRedisConnection({
      url: redis.url,
      clock,
      ...deps.redisTimeouts,
      probe: createRedisProbe(redis.keyPrefix),
      onChange(change) {
        if (change.kind === "degraded") {
          log.error(
            { component, reason: change.reason, since: change.since.toISOString() },
            "Redis is unreachable: rate limits fall back to each instance's memory",
          );
        } else {
          log.info({ component, degradedForMs: change.degradedForMs }, "Redis is back: rate limits are shared again");
        }
      },
    });
    connection = shared;
    limiter = (name, limit) =>
      createRedisRateLimiter({ connection: shared, keyPrefix: `${redis.keyPrefix}:${name}`, limit, fallback: memory(limit) });
    await shared.ready();
    // Never the URL: it may carry a password.
    if (shared.usable()) log.info({ component, backend: "redis" }, "rate limits are shared through Redis");
  }

  const apiKeys = config.rateLimit && limiter("api-key", config.rateLimit);
  const failedAuth = failedAuthLimit
    ? createFailedAuthThrottle({ limiter: limiter("failed-auth", failedAuthLimit), clock })
    : createOpenFailedAuthThrottle();

  return {
    apiKeys,
    failedAuth,
    describe: () => connection?.state() ?? { backend: "memory" },
    close: async () => connection?.close(),
  };
}
