/**
 * A checkout token is the capability in a checkout link, and the only thing
 * the customer's browser sends. To be found on one shard once the tables are
 * distributed by merchant (docs/SCALING.md), it carries its merchant:
 * `<256 random bits, base64url>.<merchant id, base64url>`. The random part is
 * the secret; the merchant part only routes the lookup (a forged one finds
 * nothing). Tokens made before this format have no dot and are still found,
 * through a plain index, so every link already sent keeps working.
 */

/**
 * The shape of a token in a path, as a regular-expression source: the
 * secret part (16–128 base64url characters, so tokens of the older format
 * match too), then optionally the merchant part. A path of any other shape
 * is answered like an unknown token without a lookup.
 */
export const checkoutTokenSource = "[A-Za-z0-9_-]{16,128}(?:\\.[A-Za-z0-9_-]{1,256})?";

/** The separator never occurs in base64url, so the last one splits a token unambiguously. */
const separator = ".";

/** makeCheckoutToken joins 32 random bytes and the merchant id into a token. */
export function makeCheckoutToken(merchantId: string, random: Buffer): string {
  return `${random.toString("base64url")}${separator}${Buffer.from(merchantId, "utf8").toString("base64url")}`;
}

/** merchantOfCheckoutToken: the merchant a token routes to, or undefined for a token of the older format (or none). */
export function merchantOfCheckoutToken(token: string): string | undefined {
  const at = token.lastIndexOf(separator);
  if (at < 0) return undefined;
  const encoded = token.slice(at + 1);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  const merchantId = Buffer.from(encoded, "base64url").toString("utf8");
  // Only a canonical encoding routes: anything else is a token that matches nothing.
  return Buffer.from(merchantId, "utf8").toString("base64url") === encoded ? merchantId : undefined;
}
