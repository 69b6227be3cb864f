import { invalid } from "../rules/invalid.js";

/**
 * Field rules shared by the services. Each failure is InvalidArgument with a
 * message that starts with the field's JSON name, so REST and RPC clients
 * learn which field to fix.
 */

// Practical address syntax (WHATWG's valid e-mail address, plus a dot in the
// domain): what a mail provider will accept, without RFC 5322 comments/quotes.
const emailPattern =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function checkEmail(field: string, value: string): void {
  if (value.length > 254 || value.split("@")[0]!.length > 64 || !emailPattern.test(value)) {
    throw invalid(`${field} must be a valid email address of at most 254 characters`);
  }
}

export const clientReferencePattern = /^[A-Za-z0-9._:-]{1,100}$/;

export function checkClientReference(field: string, value: string): void {
  if (!clientReferencePattern.test(value)) {
    throw invalid(`${field} must be 1 to 100 characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'`);
  }
}

/** Free text such as names: 1–max characters, not blank, no control characters. */
export function checkText(field: string, value: string, max: number): void {
  const length = [...value].length;
  // eslint-disable-next-line no-control-regex
  if (length === 0 || length > max || value.trim() === "" || /[\u0000-\u001f\u007f]/.test(value)) {
    throw invalid(`${field} must be 1 to ${max} characters of text`);
  }
}

/** A host name as DNS spells it (RFC 1123 §2.1): dot-separated labels of letters, digits and inner hyphens. */
const dnsName = /^(?=.{1,253}\.?$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?$/;
const ipv4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
/** Control characters, white space (ASCII and Unicode) and NUL: none belongs in a URL as sent. */
const unsafeInUrl = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/**
 * checkCallbackUrl accepts an absolute http(s) URL without credentials whose
 * host is a DNS name or an IP literal, and returns it normalised (WHATWG URL
 * serialisation: lower-case scheme and host, punycode, default port dropped):
 * the form that is stored, returned, and from which the checkout page's
 * Content-Security-Policy takes the origin. A URL parser accepts hosts such as
 * "shop;x.example" or "a,b" and quietly drops tabs and newlines; such a value
 * could add directives to that header or redirect customers somewhere
 * unexpected, so the raw text is checked too.
 */
export function checkCallbackUrl(field: string, value: string): string {
  const refuse = () => invalid(`${field} must be an absolute http or https URL of at most 2048 characters`);
  if (value.length > 2048 || !/^https?:\/\//i.test(value) || unsafeInUrl.test(value) || !value.isWellFormed()) throw refuse();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse();
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse();
  const host = url.hostname;
  const ipv6 = host.startsWith("[") && host.endsWith("]");
  if (!ipv6 && !ipv4.test(host) && !dnsName.test(host)) {
    throw invalid(`${field} must name its host as a DNS name or an IP address`);
  }
  if (url.username !== "" || url.password !== "") {
    throw invalid(`${field} must not carry credentials`);
  }
  if (url.href.length > 2048) throw refuse();
  return url.href;
}
