import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * signPaystackBody is Paystack's webhook signature: the hex HMAC-SHA512 of
 * the raw body, keyed by the merchant's secret key (header x-paystack-signature).
 */
export function signPaystackBody(secretKey: string, rawBody: Buffer | string): string {
  return createHmac("sha512", secretKey).update(rawBody).digest("hex");
}

/** verifyPaystackSignature compares in constant time; anything not 128 hex digits fails. */
export function verifyPaystackSignature(secretKey: string, rawBody: Buffer, signature: string): boolean {
  if (!/^[0-9a-fA-F]{128}$/.test(signature)) return false;
  const expected = Buffer.from(signPaystackBody(secretKey, rawBody), "hex");
  return timingSafeEqual(expected, Buffer.from(signature, "hex"));
}
