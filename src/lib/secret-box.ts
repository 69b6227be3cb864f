import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * SecretBox seals webhook signing secrets for storage. With
 * WEBHOOK_SECRET_KEY set, a secret is stored AES-256-GCM encrypted, so a
 * database dump or backup alone cannot forge deliveries; without it, stored
 * as it is, behind a marker that says so.
 *
 * Stored forms (versioned, so the key can be rotated and the format changed
 * later without guessing what a value is):
 *   "plain:<secret>"                      no key was set when it was written
 *   "v1:<key id>:<base64url(iv ‖ ciphertext ‖ tag)>"
 * The key id is the first 8 hex digits of SHA-256 of the key: a value names
 * the key that opens it, so a box given the old key among previousKeys reads
 * values written before a rotation, and a wrong key is reported as such
 * rather than as corruption. The context (the endpoint id) is GCM's
 * additional data: a sealed secret copied into another endpoint's row does
 * not open there.
 */
export interface SecretBox {
  /** Whether seal encrypts (a key is set). */
  readonly encrypts: boolean;
  /** seal is the stored form of secret, bound to context. */
  seal(secret: string, context: string): string;
  /** open is the secret a stored value holds; throws SecretBoxError when it cannot be opened. */
  open(stored: string, context: string): string;
}

export interface SecretBoxOptions {
  /** The 32-byte key (WEBHOOK_SECRET_KEY); unset: secrets are stored as they are. */
  key?: Buffer;
  /** Keys used before a rotation: values they sealed still open. */
  previousKeys?: readonly Buffer[];
  /** Random bytes for the 96-bit GCM nonce; injectable for tests. */
  random?: (size: number) => Buffer;
}

/** SecretBoxError: a stored secret could not be opened (wrong or missing key, altered value). Never carries the secret. */
export class SecretBoxError extends Error {}

const plainPrefix = "plain:";
const version = "v1";
const ivBytes = 12;
const tagBytes = 16;

/** keyId names a key without revealing it. */
function keyId(key: Buffer): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 8);
}

/**
 * parseSecretKey reads WEBHOOK_SECRET_KEY: exactly 32 bytes written as 64 hex
 * digits or as base64 (standard or URL-safe, padded or not). The error never
 * echoes the text.
 */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, "hex");
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) key = Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  if (key === undefined || key.length !== 32) {
    throw new SecretBoxError("the key must be 32 bytes, written as 64 hex digits or as base64");
  }
  return key;
}

/** createSecretBox makes a SecretBox with the given key (or none). */
export function createSecretBox(options: SecretBoxOptions = {}): SecretBox {
  const random = options.random ?? randomBytes;
  for (const key of [options.key, ...(options.previousKeys ?? [])]) {
    if (key !== undefined && key.length !== 32) throw new SecretBoxError("an AES-256-GCM key is 32 bytes");
  }
  const current = options.key;
  const keys = new Map<string, Buffer>();
  for (const key of [...(options.previousKeys ?? []), ...(current ? [current] : [])]) keys.set(keyId(key), key);

  return {
    encrypts: current !== undefined,
    seal(secret, context) {
      if (current === undefined) return plainPrefix + secret;
      const iv = random(ivBytes);
      const cipher = createCipheriv("aes-256-gcm", current, iv, { authTagLength: tagBytes });
      cipher.setAAD(Buffer.from(context, "utf8"));
      const sealed = Buffer.concat([iv, cipher.update(secret, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${version}:${keyId(current)}:${sealed.toString("base64url")}`;
    },
    open(stored, context) {
      // A value written before a key was set still opens, so encryption can be
      // turned on without a migration; the next write seals it.
      if (stored.startsWith(plainPrefix)) return stored.slice(plainPrefix.length);
      const [format, id, payload, extra] = stored.split(":");
      if (format !== version || id === undefined || payload === undefined || extra !== undefined) {
        throw new SecretBoxError("a stored webhook secret is in an unknown format");
      }
      const key = keys.get(id);
      if (key === undefined) {
        throw new SecretBoxError(
          current === undefined
            ? `a stored webhook secret is encrypted (key ${id}) but WEBHOOK_SECRET_KEY is not set`
            : `a stored webhook secret was encrypted with another WEBHOOK_SECRET_KEY (key ${id}, this one is ${keyId(current)})`,
        );
      }
      const sealed = Buffer.from(payload, "base64url");
      if (sealed.length < ivBytes + tagBytes) throw new SecretBoxError("a stored webhook secret is truncated");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, ivBytes), { authTagLength: tagBytes });
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(sealed.subarray(sealed.length - tagBytes));
        return Buffer.concat([decipher.update(sealed.subarray(ivBytes, sealed.length - tagBytes)), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretBoxError("a stored webhook secret failed authentication: it was altered or belongs to another endpoint");
      }
    },
  };
}
