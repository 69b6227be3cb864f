import type { ApiKeyMode } from "../auth/api-key-format.js";

/**
 * ApiKeyRecord is a stored key (issue 23, §2); the key itself never is, only
 * its hash. Keys stored before keys were a resource (API_KEYS, `npm run
 * keys`, the sandbox) have no name, scopes, networks or expiry, and a mode
 * read from their prefix.
 */
export interface ApiKeyRecord {
  id: string;
  merchantId: string;
  mode: ApiKeyMode;
  /** The merchant's name for it; "" for keys made before names. */
  name: string;
  /** What the key may do; empty: everything. */
  scopes: readonly string[];
  /** Client networks (CIDR) it is accepted from; empty: anywhere. */
  allowedCidrs: readonly string[];
  /** The key's first characters, for the operators' listing (`npm run keys -- list`). */
  keyPrefix: string;
  /** The key's last 4 characters; "" for keys stored before they were kept. */
  last4: string;
  createdAt: Date;
  /** When it was last used, to within the flush interval (a minute); null: not since it was made. */
  lastUsedAt: Date | null;
  /** When it stops working; a rolled key's grace end. null: never. */
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** NewApiKey is what a store needs to keep a key made through the API. */
export interface NewApiKey {
  merchantId: string;
  /** The key itself: the store keeps its hash, prefix and last 4 characters. */
  key: string;
  mode: ApiKeyMode;
  name: string;
  scopes: readonly string[];
  allowedCidrs: readonly string[];
  expiresAt: Date | null;
}

/**
 * isKeyActive is the one rule of which keys authenticate: not revoked, and
 * not past its expiry (a rolled key's grace end is its expiry), judged at
 * `now` of the injected clock.
 */
export function isKeyActive(key: { revokedAt?: Date | null; expiresAt: Date | null }, now: Date): boolean {
  return !key.revokedAt && (key.expiresAt === null || key.expiresAt.getTime() > now.getTime());
}
