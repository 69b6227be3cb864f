import { Code, ConnectError } from "@connectrpc/connect";
import type { RateLimiter } from "../lib/rate-limiter.js";
import type { ApiKeyVerifier } from "./api-key-verifier.js";
import { hashApiKey } from "./hash-api-key.js";

/** The response header that tells a limited client when to retry (RFC 9110 §10.2.3), in whole seconds. */
export const retryAfterHeader = "retry-after";

/**
 * createRateLimitedVerifier charges one token per authenticated request to
 * the presented key's bucket. Every REST route and RPC verifies its key
 * exactly once, so limiting here covers all four protocols in one place and
 * keeps the contract's order of checks (route, key, then everything else).
 * Unknown keys are refused before they reach the limiter, so they can neither
 * fill its memory nor spend a real key's tokens. Buckets are keyed by the
 * key's hash: the limiter never holds a key.
 *
 * Over the limit: ResourceExhausted (REST 429) with a Retry-After header.
 */
export function createRateLimitedVerifier(
  verifier: ApiKeyVerifier,
  limiter: RateLimiter,
  limit: { ratePerSecond: number; burst: number },
): ApiKeyVerifier {
  return {
    async verify(key) {
      const principal = await verifier.verify(key);
      if (!principal) return undefined;
      const decision = limiter.take(hashApiKey(key).toString("hex"));
      if (decision.allowed) return principal;
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new ConnectError(
        `rate limit exceeded: at most ${limit.ratePerSecond} requests per second per API key, bursts of ${limit.burst}; retry after ${seconds} s`,
        Code.ResourceExhausted,
        { [retryAfterHeader]: String(seconds) },
      );
    },
  };
}
