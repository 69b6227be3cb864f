import type { ApiKeyMode } from "../auth/api-key-format.js";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { ApiKeyRecord, NewApiKey } from "../domain/api-key.js";

export type { ApiKeyRecord, NewApiKey } from "../domain/api-key.js";

/** RolledKey is what a roll wrote: the old key with its new expiry, and its successor. */
export interface RolledKey {
  old: ApiKeyRecord;
  created: ApiKeyRecord;
}

/**
 * ApiKeyStore manages merchants' API keys in durable storage: the keys CLI
 * and the key API write through it and the server verifies through it.
 * verify answers only for keys active at the store's clock (domain/api-key.ts,
 * isKeyActive), so an expired key is refused like a revoked one, and a
 * stream's recheck ends it at its expiry.
 */
export interface ApiKeyStore extends ApiKeyVerifier {
  /** Creates the merchant unless it exists. */
  ensureMerchant(merchantId: string, name: string): Promise<void>;
  /**
   * Stores a key of today's formats for a merchant (API_KEYS, the CLI, the
   * sandbox; creating the merchant if needed), its mode read from its
   * prefix. Storing a key the merchant already has is a no-op; a key of
   * another merchant fails.
   */
  addKey(merchantId: string, key: string): Promise<ApiKeyRecord>;
  /** Every merchant's keys, revoked ones included (the operators' CLI). */
  listKeys(): Promise<ApiKeyRecord[]>;
  /** Revokes a key by id, whatever its merchant (the CLI); false when there is no such active key. */
  revokeKey(id: string): Promise<boolean>;
  countActiveKeys(): Promise<number>;

  /** Stores a key made through the key API, with its name, scopes, networks and expiry. */
  createKey(key: NewApiKey): Promise<ApiKeyRecord>;
  /** The merchant's keys of the given modes that are not revoked, oldest first (expired ones included). */
  listMerchantKeys(merchantId: string, modes: readonly ApiKeyMode[]): Promise<ApiKeyRecord[]>;
  /** One of the merchant's keys that is not revoked. */
  findKey(merchantId: string, id: string): Promise<ApiKeyRecord | undefined>;
  /**
   * In one transaction: the old key's expiry becomes endsAt (or stays, when
   * sooner) and its successor, the new key with the old one's name, mode,
   * scopes, networks and expiry, is stored. undefined when the merchant has
   * no such key active now.
   */
  rollKey(merchantId: string, id: string, newKey: string, endsAt: Date): Promise<RolledKey | undefined>;
  /** Revokes one of the merchant's keys; the record as revoked, or undefined when it has no such key unrevoked. */
  revokeMerchantKey(merchantId: string, id: string): Promise<ApiKeyRecord | undefined>;
  /** Records when a key was used (a later time only: never moves back). */
  markUsed(merchantId: string, id: string, at: Date): Promise<void>;
}
