import { randomUUID } from "node:crypto";
import { createSystemClock, type Clock } from "../lib/clock.js";
import { createMemoryApiKeyStore, type MemoryApiKeyStore } from "../store/memory/memory-api-key-store.js";

export interface ApiKeyEntry {
  merchantId: string;
  merchantName: string;
  key: string;
}

/** MemoryApiKeyVerifier is the in-memory key store as a verifier, which can take keys made at run time (the test helpers' merchants). */
export type MemoryApiKeyVerifier = MemoryApiKeyStore;

/**
 * createMemoryApiKeyVerifier is the in-memory key store holding the given
 * keys (API_KEYS, a test's). Ids and the clock are the service's when it
 * passes them; a unit test's verifier gets its own.
 */
export function createMemoryApiKeyVerifier(
  entries: readonly ApiKeyEntry[],
  options: { clock?: Clock; newKeyId?: () => string } = {},
): MemoryApiKeyVerifier {
  const store = createMemoryApiKeyStore({
    clock: options.clock ?? createSystemClock(),
    newKeyId: options.newKeyId ?? (() => `key_${randomUUID()}`),
  });
  for (const entry of entries) store.add(entry);
  return store;
}
