import type { Principal } from "../domain/principal.js";

/**
 * ApiKeyVerifier is the port that turns a presented API key into the merchant
 * that owns it. Implementations hold only hashes of keys.
 */
export interface ApiKeyVerifier {
  verify(key: string): Promise<Principal | undefined>;
}
