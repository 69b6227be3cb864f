import { isIP } from "node:net";

/** Why a value is not a usable http(s) URL: not one at all (or too long), an odd host, or a user and password. */
export type HttpUrlProblem = "syntax" | "host" | "credentials";

/** A host name as DNS spells it (RFC 1123 §2.1), after URL parsing lower-cased it. */
const dnsName = /^(?=.{1,253}\.?$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?$/;

/** Control characters, white space (ASCII and Unicode) and NUL: a URL parser drops or encodes them silently. */
export const unsafeInUrl = "\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200b\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";
const unsafe = new RegExp(`[${unsafeInUrl}]`, "u");

/**
 * readHttpUrl is the one URL syntax check of the service, for callbackUrl,
 * a webhook endpoint's url and the callback the checkout page reads back. It
 * accepts an absolute http(s) URL without credentials whose host is a DNS
 * name or an IP literal, and returns it parsed: its href is the WHATWG
 * serialisation (lower-case scheme and host, punycode, default port dropped,
 * numeric IPv4 forms written as dotted quads), the form stored and used. A
 * URL parser accepts hosts such as "shop;x.example" or "a,b" and quietly
 * drops tabs and newlines; such a value could add directives to the checkout
 * page's Content-Security-Policy or send customers somewhere unexpected, so
 * the raw text is checked too. maxLength bounds the serialised form as well.
 */
export function readHttpUrl(value: string, maxLength = Infinity): URL | HttpUrlProblem {
  if (!/^https?:\/\//i.test(value) || unsafe.test(value) || !value.isWellFormed()) return "syntax";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "syntax";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "syntax";
  if (isIP(bareHost(url)) === 0 && !dnsName.test(url.hostname)) return "host";
  if (url.username !== "" || url.password !== "") return "credentials";
  if (url.href.length > maxLength) return "syntax";
  return url;
}

/** bareHost is the URL's host as a resolver or socket takes it: IPv6 literals without brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}
