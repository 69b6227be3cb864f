import { createHmac, timingSafeEqual } from "node:crypto";
import type { ListCursor } from "../store/payment-intent-store.js";

/** Items per page when the client names no pageSize, and the most it may ask for. */
export const defaultPageSize = 50;
export const maxPageSize = 100;

/**
 * What a page token binds beside the position: the merchant, and the query it
 * belongs to — the listed resource first, then its filters in a fixed order
 * (["payment_intents", clientReference, status]), so a token can serve only
 * the listing that issued it.
 */
export interface PageTokenScope {
  merchantId: string;
  query: readonly string[];
}

/**
 * PageTokenCodec turns a keyset cursor into an opaque token and back. Tokens
 * are HMAC-signed over the cursor, the merchant and the filters, so a forged
 * token, another merchant's token, or a token replayed with other filters is
 * refused instead of leaking or skipping rows (AIP-158).
 */
export interface PageTokenCodec {
  encode(cursor: ListCursor, scope: PageTokenScope): string;
  /** Returns undefined for any token that was not issued for this scope. */
  decode(token: string, scope: PageTokenScope): ListCursor | undefined;
}

/** createPageTokenCodec signs with secret; instances that share it accept each other's tokens. */
export function createPageTokenCodec(secret: string): PageTokenCodec {
  const sign = (payload: string, scope: PageTokenScope) =>
    createHmac("sha256", secret)
      .update(JSON.stringify([payload, scope.merchantId, ...scope.query]))
      .digest()
      .subarray(0, 16);

  return {
    encode(cursor, scope) {
      const payload = Buffer.from(`${cursor.createdAt.getTime()}.${cursor.id}`).toString("base64url");
      return `${payload}.${sign(payload, scope).toString("base64url")}`;
    },
    decode(token, scope) {
      const [payload, mac, ...rest] = token.split(".");
      if (!payload || !mac || rest.length > 0 || token.length > 512) return undefined;
      // Compare the text, not the decoded bytes: base64url decoding ignores
      // stray characters and trailing bits, so altered tokens would pass.
      const expected = Buffer.from(sign(payload, scope).toString("base64url"));
      const given = Buffer.from(mac);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const match = /^(\d{1,15})\.(.+)$/.exec(Buffer.from(payload, "base64url").toString());
      if (!match) return undefined;
      return { createdAt: new Date(Number(match[1])), id: match[2]! };
    },
  };
}
