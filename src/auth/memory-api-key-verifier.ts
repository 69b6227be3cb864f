import { timingSafeEqual } from "node:crypto";
import type { Principal } from "../domain/principal.js";
import type { ApiKeyVerifier } from "./api-key-verifier.js";
import { hashApiKey } from "./hash-api-key.js";

export interface ApiKeyEntry {
  merchantId: string;
  merchantName: string;
  key: string;
}

/**
 * createMemoryApiKeyVerifier keeps SHA-256 hashes of the configured keys,
 * never the keys. The presented key is hashed before any comparison, so the
 * time a lookup takes says nothing about how much of a real key was guessed;
 * the final comparison is constant-time as well.
 */
export function createMemoryApiKeyVerifier(entries: readonly ApiKeyEntry[]): ApiKeyVerifier {
  const byHash = new Map<string, { hash: Buffer; principal: Principal }>();
  for (const entry of entries) {
    const hash = hashApiKey(entry.key);
    byHash.set(hash.toString("hex"), {
      hash,
      principal: { merchantId: entry.merchantId, merchantName: entry.merchantName },
    });
  }
  return {
    async verify(key) {
      const hash = hashApiKey(key);
      const found = byHash.get(hash.toString("hex"));
      if (!found || !timingSafeEqual(found.hash, hash)) return undefined;
      return { ...found.principal };
    },
  };
}
