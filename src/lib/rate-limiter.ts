import type { Clock } from "./clock.js";

/** RateDecision says whether one request may pass, and if not, when one will. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface RateLimiterOptions {
  /** Tokens added per second: the sustained rate each key may use. */
  ratePerSecond: number;
  /** Most tokens a key can save up: the burst it may send at once. */
  burst: number;
  clock: Clock;
  /**
   * Most keys tracked at once. Past it the least recently used key is
   * forgotten (and starts again with a full bucket), so memory stays bounded
   * whatever the number of keys.
   */
  maxKeys?: number;
}

/** RateLimiter is a token bucket per key. */
export interface RateLimiter {
  /** Takes one token from key's bucket when it has one. */
  take(key: string): RateDecision;
  /** Keys currently tracked. */
  readonly size: number;
}

/**
 * createRateLimiter keeps a token bucket per key, refilled continuously at
 * ratePerSecond up to burst. The buckets live in a Map in least-recently-used
 * order (a key is re-inserted on every use), so evicting the oldest is O(1).
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { ratePerSecond, burst, clock } = options;
  const maxKeys = options.maxKeys ?? 10_000;
  const buckets = new Map<string, { tokens: number; at: number }>();

  return {
    get size() {
      return buckets.size;
    },
    take(key) {
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
    },
  };
}
