import { luhnValid } from "../lib/luhn.js";

/**
 * Redaction for log lines. Logs leave the service (terminals, log shippers,
 * support tickets), so anything that is a credential or card data is removed
 * here, in the logger, rather than trusted to every call site:
 *  - credential-like keys (authorization, cookie, api keys, secrets, passwords,
 *    card security codes) lose their value entirely;
 *  - a card number (PAN) is a token of its own — 13–19 digits in a row, or
 *    written in groups the way card numbers are (a first group of four, then
 *    groups of 3–6 separated by one space or dash: 4-4-4-4, 4-6-5,
 *    4-4-4-4-3), not glued to letters or other digits — whose digits pass the
 *    Luhn check (ISO/IEC 7812-1), as every issued card number does; it keeps
 *    only its last four digits (PCI DSS 3.4 allows at most the first six and
 *    last four). Digits inside a name ("Migration20261121000000_initial"),
 *    a timestamp or a UUID (8-4-4-4-12) are left alone, and so are numbers
 *    that fail the check;
 *  - email addresses keep the first character of the local part
 *    (a***@example.com): enough to tell customers apart in support, not
 *    enough to contact them;
 *  - "Bearer <token>" inside any text loses its token;
 *  - a Paystack secret key (sk_test_…, sk_live_…) inside any text keeps only its prefix.
 */

/** The value a redacted key gets. */
export const redactedValue = "[redacted]";

const secretKeyPattern =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|key|token|pan|cvv|cvc|cvv2|cardnumber|card_number|card-number)$|secret|password|passwd|api[-_]?key/i;
/** A digit run, or card-style groups, standing on its own; maskPan checks there are 13–19 digits passing Luhn. */
const panPattern = /(?<![\dA-Za-z_])(?:\d{13,19}|\d{4}(?:[ -]\d{3,6}){2,4})(?![\dA-Za-z_])/g;
/** What a card number needs at least: 13 digits in a row, or a group of four followed by a separator and a digit. */
const panHint = /\d{13}|\d{4}[ -]\d/;
const bearerHint = /bearer/i;
const emailPattern = /([A-Za-z0-9_!#$%&'*+/=?^`{|}~.-])[A-Za-z0-9_!#$%&'*+/=?^`{|}~.-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})/g;
const bearerPattern = /\b(Bearer)\s+[^\s,;"']+/gi;
const processorKeyPattern = /\b(sk_(?:test|live)_)[0-9A-Za-z]+/g;

/** maskPan keeps the last four digits of a card-number-like run and the grouping. */
function maskPan(run: string): string {
  const digits = run.replace(/\D/g, "");
  if (digits.length < 13 || digits.length > 19 || !luhnValid(digits)) return run;
  let keep = 4;
  const chars = [...run];
  for (let i = chars.length - 1; i >= 0; i--) {
    if (!/\d/.test(chars[i]!)) continue;
    if (keep > 0) keep -= 1;
    else chars[i] = "*";
  }
  return chars.join("");
}

/** redactText masks card numbers, emails, bearer tokens and processor secret keys inside free text. */
export function redactText(text: string): string {
  // Each rule runs only where the text could hold what it masks: most text
  // (ids, routes, messages) holds none, and is returned as it is.
  let out = text;
  if (bearerHint.test(out)) out = out.replace(bearerPattern, `$1 ${redactedValue}`);
  if (out.includes("sk_")) out = out.replace(processorKeyPattern, `$1${redactedValue}`);
  if (panHint.test(out)) out = out.replace(panPattern, maskPan);
  if (out.includes("@")) out = out.replace(emailPattern, "$1***@$2");
  return out;
}

/** A number is logged as is unless it has as many digits as a card number. */
function redactNumber(value: number | bigint): number | bigint | string {
  if (typeof value === "number" && !Number.isInteger(value)) return value;
  const digits = (value < 0 ? -value : value).toString();
  return digits.length >= 13 && digits.length <= 19 ? maskPan(digits) : value;
}

const maxDepth = 8;

/**
 * redactValue returns a copy of a log field with every rule above applied,
 * at any depth. Errors become {type, message, stack} so their text is masked
 * too; objects nested deeper than the log could usefully show are cut off.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (typeof value === "number" || typeof value === "bigint") return redactNumber(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= maxDepth) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (value instanceof Error) {
    return redactFields({ type: value.name, message: value.message, stack: value.stack }, depth + 1);
  }
  if (value instanceof Date) return value;
  return redactFields(value as Record<string, unknown>, depth + 1);
}

/** redactFields applies redactValue to each field, and blanks credential-like keys. */
export function redactFields(fields: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const value = fields[key];
    out[key] = value !== undefined && value !== null && secretKeyPattern.test(key) ? redactedValue : redactValue(value, depth);
  }
  return out;
}
