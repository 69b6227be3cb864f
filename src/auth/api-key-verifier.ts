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
}
