/** RateDecision says whether one request may pass, and if not, when one will. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/** RateLimit is a sustained rate and the burst allowed on top of it (RATE_LIMIT_RPS, RATE_LIMIT_BURST). */
export interface RateLimit {
  /** Requests per second a key may make, sustained. May be fractional (failed-auth budgets are per minute). */
  ratePerSecond: number;
  /** Requests a key may send at once after a quiet spell. */
  burst: number;
}

/** LimiterDegradation says why a shared limiter fell back to memory, and since when. */
export interface LimiterDegradation {
  reason: string;
  since: Date;
}

/**
 * LimiterState is which backend decides now, for /readyz detail and the log:
 * "redis" (one limit across every instance) or "memory" (each instance on its
 * own), with the degradation when memory is standing in for an unreachable
 * Redis rather than chosen by configuration.
 */
export type LimiterState = { backend: "redis" } | { backend: "memory"; degraded?: LimiterDegradation };

/**
 * RateLimiter is the port behind every limit the service applies: one
 * decision per call, charged to key. Keys are hashes chosen by the caller
 * (an API key's SHA-256, an address group's hash), never a secret itself,
 * because a shared backend stores them.
 *
 * consume never throws for a backend's sake: an implementation that depends on
 * a remote store answers from memory while the store is unreachable.
 */
export interface RateLimiter {
  consume(key: string): Promise<RateDecision>;
  describe(): LimiterState;
}
