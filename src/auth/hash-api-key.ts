import { hash } from "node:crypto";

/**
 * hashApiKey is how a key is stored and looked up. API keys are long random
 * strings, so a fast unsalted SHA-256 is enough (as for GitHub tokens): there
 * is no dictionary to brute-force, and lookups stay O(1).
 */
export function hashApiKey(key: string): Buffer {
  return hash("sha256", key, "buffer");
}
