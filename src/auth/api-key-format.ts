import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

/**
 * The API key format (issue 23, §1), after GitHub's tokens: a prefix that
 * names the mode (`sk_test_`, `sk_live_`), 30 random base62 characters
 * (≈178 bits), then 6 base62 characters of the CRC32 of everything before
 * them. A secret scanner recognises a key by its shape and checksum alone, and
 * a mistyped key is refused without a store lookup.
 *
 * Keys of the earlier formats (base64url bodies from `npm run keys`, the
 * sandbox and the demo key; anything given in API_KEYS) never have this exact
 * shape, so they are not checksum-checked and keep working unchanged.
 */
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const randomLength = 30;
const checksumLength = 6;
const shape = new RegExp(`^sk_(?:test|live)_[0-9A-Za-z]{${randomLength + checksumLength}}$`);

/** ApiKeyMode is the mode a key acts in: its objects, its processor, its webhooks. */
export type ApiKeyMode = "test" | "live";

/** The prefix of a key of the mode. */
export const apiKeyPrefix = (mode: ApiKeyMode): string => `sk_${mode}_`;

/**
 * modeOfKey reads a key's mode from its prefix: `sk_live_` is live, anything
 * else (test keys, and keys of today's formats without that prefix) is test,
 * so no deployment's keys change meaning on upgrade.
 */
export function modeOfKey(key: string): ApiKeyMode {
  return key.startsWith("sk_live_") ? "live" : "test";
}

/** checksumOf is the 6 base62 characters of the CRC32 of text. */
function checksumOf(text: string): string {
  let n = crc32(text);
  let out = "";
  for (let i = 0; i < checksumLength; i++) {
    out = alphabet[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** newApiKey makes a key of the mode in the current format. */
export function newApiKey(mode: ApiKeyMode, random: (size: number) => Buffer = randomBytes): string {
  let body = "";
  // Rejection sampling keeps every character uniform: bytes 248–255 would favour the first 8.
  while (body.length < randomLength) {
    for (const byte of random(randomLength * 2)) {
      if (byte < 248 && body.length < randomLength) body += alphabet[byte % 62];
    }
  }
  const rest = apiKeyPrefix(mode) + body;
  return rest + checksumOf(rest);
}

/**
 * hasCurrentFormat tells whether a key has the current shape (prefix, 36
 * base62 characters), whatever its checksum.
 */
export function hasCurrentFormat(key: string): boolean {
  return shape.test(key);
}

/**
 * failsChecksum is true for a key of the current shape whose last 6
 * characters are not the checksum of the rest: a typo or a truncated paste,
 * refused before any lookup.
 */
export function failsChecksum(key: string): boolean {
  if (!hasCurrentFormat(key)) return false;
  const cut = key.length - checksumLength;
  return checksumOf(key.slice(0, cut)) !== key.slice(cut);
}
