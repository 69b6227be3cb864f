import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";

/** ApiKeyRecord describes a stored key; the key itself is never stored. */
export interface ApiKeyRecord {
  id: string;
  merchantId: string;
  /** The key's first characters, to tell keys apart in listings. */
  keyPrefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/**
 * ApiKeyStore manages merchants' API keys in durable storage: the keys CLI
 * writes through it and the server verifies through it.
 */
export interface ApiKeyStore extends ApiKeyVerifier {
  /** Creates the merchant unless it exists. */
  ensureMerchant(merchantId: string, name: string): Promise<void>;
  /**
   * Stores a key for a merchant (creating the merchant if needed). Storing a
   * key the merchant already has is a no-op; a key of another merchant fails.
   */
  addKey(merchantId: string, key: string): Promise<ApiKeyRecord>;
  listKeys(): Promise<ApiKeyRecord[]>;
  /** Revokes a key by id; false when there is no such active key. */
  revokeKey(id: string): Promise<boolean>;
  countActiveKeys(): Promise<number>;
}
