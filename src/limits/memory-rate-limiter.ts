import type { Clock } from "../lib/clock.js";
import type { LimiterState, RateDecision, RateLimit, RateLimiter } from "./rate-limiter.js";

export interface MemoryRateLimiterOptions extends RateLimit {
  clock: Clock;
  /**
   * Most keys tracked at once. Past it the least recently used key is
   * forgotten (and starts again with a full bucket), so memory stays bounded
   * whatever the number of keys.
   */
  maxKeys?: number;
}

/** MemoryRateLimiter is a RateLimiter held in this process, with a synchronous take for callers that can use one. */
export interface MemoryRateLimiter extends RateLimiter {
  /** Takes one token from key's bucket when it has one. */
  take(key: string): RateDecision;
  /** Keys currently tracked. */
  readonly size: number;
}

const memoryState: LimiterState = { backend: "memory" };

/**
 * createMemoryRateLimiter keeps a token bucket per key, refilled continuously
 * at ratePerSecond up to burst: after t seconds a key has had at most
 * burst + ratePerSecond × t requests. The buckets live in a Map in
 * least-recently-used order (a key is re-inserted on every use), so evicting
 * the oldest is O(1). Each instance has its own buckets.
 */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions): MemoryRateLimiter {
  const { ratePerSecond, burst, clock } = options;
  const maxKeys = options.maxKeys ?? 10_000;
  const buckets = new Map<string, { tokens: number; at: number }>();

  function take(key: string): RateDecision {
    const now = clock.now().getTime();
    const bucket = buckets.get(key);
    // A clock that steps back must not drain a bucket.
    const elapsed = bucket ? Math.max(0, now - bucket.at) : 0;
    let tokens = bucket ? Math.min(burst, bucket.tokens + (elapsed * ratePerSecond) / 1000) : burst;
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    buckets.delete(key);
    buckets.set(key, { tokens, at: now });
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    return allowed ? { allowed } : { allowed, retryAfterMs: Math.ceil(((1 - tokens) * 1000) / ratePerSecond) };
  }

  return {
    get size() {
      return buckets.size;
    },
    take,
    consume: async (key) => take(key),
    describe: () => memoryState,
  };
}
