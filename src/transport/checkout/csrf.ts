import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The cookie that carries the browser's CSRF nonce. */
export const csrfCookieName = "checkout_csrf";

/**
 * Csrf protects the checkout forms against cross-site submission with a
 * signed double-submit cookie: the browser holds a random nonce in a
 * SameSite=Strict, HttpOnly cookie scoped to /checkout, and each form carries
 * HMAC(secret, checkout token, nonce). A cross-site form post arrives without
 * the cookie (SameSite) and cannot forge the field (no secret). The nonce is
 * reused while the cookie lives, so two open tabs both stay valid.
 */
export interface Csrf {
  /** The browser's nonce from its Cookie header, or a new one to set. */
  nonceFor(cookieHeader: string | undefined): { nonce: string; isNew: boolean };
  /** The hidden form field for one checkout token. */
  fieldFor(token: string, nonce: string): string;
  /** Whether a posted field matches the cookie's nonce for this token. */
  verify(token: string, cookieHeader: string | undefined, field: string | undefined): boolean;
  /** The Set-Cookie value for a nonce. */
  cookie(nonce: string): string;
}

export function createCsrf(options: { secret: string; secureCookie: boolean }): Csrf {
  const sign = (token: string, nonce: string) =>
    createHmac("sha256", options.secret).update(`${token}.${nonce}`).digest("base64url");
  const readNonce = (cookieHeader: string | undefined) => {
    for (const part of (cookieHeader ?? "").split(";")) {
      const [name, value] = part.trim().split("=");
      if (name === csrfCookieName && value && /^[A-Za-z0-9_-]{22,64}$/.test(value)) return value;
    }
    return undefined;
  };
  return {
    nonceFor(cookieHeader) {
      const existing = readNonce(cookieHeader);
      return existing ? { nonce: existing, isNew: false } : { nonce: randomBytes(24).toString("base64url"), isNew: true };
    },
    fieldFor: sign,
    verify(token, cookieHeader, field) {
      const nonce = readNonce(cookieHeader);
      if (!nonce || !field) return false;
      const expected = Buffer.from(sign(token, nonce));
      const given = Buffer.from(field);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    cookie(nonce) {
      return `${csrfCookieName}=${nonce}; Path=/checkout; HttpOnly; SameSite=Strict${options.secureCookie ? "; Secure" : ""}`;
    },
  };
}
