import { createHash } from "node:crypto";
import type { Clock } from "../lib/clock.js";
import { addressGroup } from "./address-group.js";
import type { LimiterState, RateDecision, RateLimiter } from "./rate-limiter.js";

/**
 * FailedAuthThrottle keeps a budget of failed authentications per client
 * address group (IPv4 /32, IPv6 /64: see addressGroup), so a flood of unknown
 * keys from one client costs neither a store lookup each nor, when the
 * database pool is saturated, a 503 for everyone else.
 *
 * How the request pipeline must use it, for every request that presents a key:
 * 1. `check(address)`. When it is not allowed, only a key already known good
 *    (in the verifier's positive cache) is accepted; every other key is
 *    answered 429 (RPC ResourceExhausted) with `Retry-After` from
 *    retryAfterMs, without a store lookup.
 * 2. Otherwise verify the key as usual; when the answer is 401 (unknown,
 *    revoked or malformed key), `recordFailure(address)`.
 * A successful authentication never spends budget, and a known-good key is
 * never refused by this throttle, so a merchant behind an address that also
 * sends garbage keeps working.
 */
export interface FailedAuthThrottle {
  /** Is address over its failure budget now? Answers from this instance's memory: no Redis round trip per request. */
  check(address: string | undefined): Promise<RateDecision>;
  /** Charges one failure to address's group; the group is blocked once its budget is spent. */
  recordFailure(address: string | undefined): Promise<void>;
  describe(): LimiterState;
}

export interface FailedAuthThrottleOptions {
  /**
   * The failure budget: one token per failure, by address group hash. With a
   * Redis limiter the budget is shared by every instance.
   */
  limiter: RateLimiter;
  clock: Clock;
  /** Most blocked groups remembered at once (oldest forgotten first), so memory stays bounded. */
  maxBlocked?: number;
}

/** addressKey is the limiter key for an address: a hash, so neither Redis nor a dump holds client addresses. */
export function addressKey(address: string | undefined): string {
  return createHash("sha256").update(`failed-auth:${addressGroup(address)}`).digest("hex");
}

/**
 * createFailedAuthThrottle charges failures to the limiter; the failure the
 * limiter refuses blocks the group here until the limiter's retry time. check
 * reads only that local block list, so the request path costs no Redis call;
 * with Redis, another instance learns of a block at its own next failure from
 * that group (the shared budget is already spent, so that failure is refused),
 * hence each other instance lets at most one more failure through per window.
 */
export function createFailedAuthThrottle(options: FailedAuthThrottleOptions): FailedAuthThrottle {
  const { limiter, clock } = options;
  const maxBlocked = options.maxBlocked ?? 10_000;
  // By address group: this instance's memory only; the shared limiter sees hashes.
  const blockedUntil = new Map<string, number>();

  return {
    async check(address) {
      // The common case, nobody blocked, costs nothing per request.
      if (blockedUntil.size === 0) return { allowed: true };
      const key = addressGroup(address);
      const until = blockedUntil.get(key);
      if (until === undefined) return { allowed: true };
      const retryAfterMs = until - clock.now().getTime();
      if (retryAfterMs > 0) return { allowed: false, retryAfterMs };
      blockedUntil.delete(key);
      return { allowed: true };
    },
    async recordFailure(address) {
      const decision = await limiter.consume(addressKey(address));
      if (decision.allowed) return;
      const key = addressGroup(address);
      blockedUntil.delete(key);
      blockedUntil.set(key, clock.now().getTime() + decision.retryAfterMs);
      if (blockedUntil.size > maxBlocked) blockedUntil.delete(blockedUntil.keys().next().value!);
    },
    describe: () => limiter.describe(),
  };
}

/** createOpenFailedAuthThrottle never blocks and counts nothing: AUTH_FAILURES_PER_MINUTE=0. */
export function createOpenFailedAuthThrottle(): FailedAuthThrottle {
  return {
    check: async () => ({ allowed: true }),
    recordFailure: async () => {},
    describe: () => ({ backend: "memory" }),
  };
}
