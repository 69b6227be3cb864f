import { createHmac, randomBytes } from "node:crypto";

/**
 * Signing as the Standard Webhooks specification defines it
 * (https://www.standardwebhooks.com, "Signature scheme"): HMAC-SHA256 over
 * "<webhook-id>.<webhook-timestamp>.<body>", keyed with the secret's decoded
 * bytes, sent as "v1,<base64 signature>". Receivers verify with any
 * implementation of the spec (the tests use the `standardwebhooks` package),
 * so nothing here may differ from it by a byte.
 */

/** The prefix every webhook secret carries, as the spec and its libraries expect. */
export const webhookSecretPrefix = "whsec_";

/** Random bytes in a new secret: the spec asks for 24 to 64; 32 is a full SHA-256 block of key. */
const secretBytes = 32;

/** A secret as shown to the merchant: "whsec_" and standard base64 of the key bytes. */
const secretPattern = /^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** generateWebhookSecret makes a new signing secret: "whsec_" + base64 of 32 random bytes. */
export function generateWebhookSecret(random: (size: number) => Buffer = randomBytes): string {
  return webhookSecretPrefix + random(secretBytes).toString("base64");
}

/** isWebhookSecret tells whether text is a secret this service could have made (24–64 key bytes). */
export function isWebhookSecret(text: string): boolean {
  if (!secretPattern.test(text)) return false;
  const size = Buffer.from(text.slice(webhookSecretPrefix.length), "base64").length;
  return size >= 24 && size <= 64;
}

/** decodeWebhookSecret is the HMAC key of a secret: the bytes its base64 stands for. */
export function decodeWebhookSecret(secret: string): Buffer {
  if (!isWebhookSecret(secret)) throw new Error("not a webhook secret (whsec_ + base64 of 24-64 bytes)");
  return Buffer.from(secret.slice(webhookSecretPrefix.length), "base64");
}

/**
 * signWebhook is the webhook-signature header value for one delivery: one
 * "v1,<signature>" per secret, separated by single spaces, in the order given
 * (the current secret first). During a rotation both the new and the old
 * secret sign, so a receiver holding either one accepts the delivery (the
 * spec's list of signatures). timestamp is the webhook-timestamp header's
 * unix seconds; body is the exact string sent.
 */
export function signWebhook(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  if (secrets.length === 0) throw new Error("signWebhook needs at least one secret");
  if (!Number.isSafeInteger(timestamp)) throw new Error("the webhook timestamp is whole unix seconds");
  const signed = `${id}.${timestamp}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac("sha256", decodeWebhookSecret(secret)).update(signed).digest("base64")}`)
    .join(" ");
}
