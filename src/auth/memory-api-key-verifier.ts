import { timingSafeEqual } from "node:crypto";
import type { Principal } from "../domain/principal.js";
import type { ApiKeyVerifier } from "./api-key-verifier.js";
import { modeOfKey } from "./api-key-format.js";
import { hashApiKey } from "./hash-api-key.js";

export interface ApiKeyEntry {
  merchantId: string;
  merchantName: string;
  key: string;
}

/** MemoryApiKeyVerifier is the in-memory verifier, which can take keys made at run time (the test helpers' merchants). */
export interface MemoryApiKeyVerifier extends ApiKeyVerifier {
  /** Adds a key; a key already held (by any merchant) is refused, so a key never changes owner. */
  add(entry: ApiKeyEntry): void;
}

/**
 * createMemoryApiKeyVerifier keeps SHA-256 hashes of the configured keys,
 * never the keys. The presented key is hashed before any comparison, so the
 * time a lookup takes says nothing about how much of a real key was guessed;
 * the final comparison is constant-time as well.
 */
export function createMemoryApiKeyVerifier(entries: readonly ApiKeyEntry[]): MemoryApiKeyVerifier {
  const byHash = new Map<string, { hash: Buffer; principal: Principal }>();
  function add(entry: ApiKeyEntry): void {
    const hash = hashApiKey(entry.key);
    const keyHash = hash.toString("hex");
    if (byHash.has(keyHash)) throw new Error("this API key is already held");
    byHash.set(keyHash, { hash, principal: { merchantId: entry.merchantId, merchantName: entry.merchantName, livemode: modeOfKey(entry.key) === "live" } });
  }
  for (const entry of entries) add(entry);
  return {
    add,
    // Every key is in memory: verifying one never waits on a store.
    knows: (key) => byHash.has(hashApiKey(key).toString("hex")),
    async verify(key) {
      const hash = hashApiKey(key);
      const found = byHash.get(hash.toString("hex"));
      if (!found || !timingSafeEqual(found.hash, hash)) return undefined;
      return { ...found.principal };
    },
  };
}
