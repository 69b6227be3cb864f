import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Field rules shared by the services. Each failure is InvalidArgument with a
 * message that starts with the field's JSON name, so REST and RPC clients
 * learn which field to fix.
 */

export function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

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

/** An absolute http(s) URL without credentials: where customers are redirected. */
export function checkCallbackUrl(field: string, value: string): void {
  let url: URL | undefined;
  try {
    url = value.length <= 2048 && /^https?:\/\//i.test(value) ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw invalid(`${field} must be an absolute http or https URL of at most 2048 characters`);
  }
  if (url.username !== "" || url.password !== "") {
    throw invalid(`${field} must not carry credentials`);
  }
}
