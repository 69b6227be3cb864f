import type { Principal } from "../domain/principal.js";

/**
 * ApiKeyVerifier is the port that turns a presented API key into the merchant
 * that owns it. Implementations hold only hashes of keys.
 */
export interface ApiKeyVerifier {
  verify(key: string): Promise<Principal | undefined>;
  /**
   * Whether the key is known to be valid without asking the store (a key held
   * in memory, or in a cache of verified keys). The failed-auth throttle lets
   * such keys through even from a blocked address.
   */
  knows?(key: string): boolean;
  /**
   * verify asked of the source of truth, past any cache of verified keys
   * (a key found revoked also leaves the cache). An open stream calls it
   * every keyRecheckIntervalMs, so a key revoked by the CLI or in the
   * database ends its streams within that time, not that time plus the
   * cache's. Absent: verify is already the source of truth (keys in memory).
   */
  recheck?(key: string): Promise<Principal | undefined>;
}

/**
 * How often an open stream re-checks its key (issue 21, §3): the key cache's
 * lifetime, so a revoked key loses its streams no later than its unary calls.
 */
export const keyRecheckIntervalMs = 10_000;
