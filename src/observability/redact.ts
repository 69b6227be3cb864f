/**
 * Redaction for log lines. Logs leave the service (terminals, log shippers,
 * support tickets), so anything that is a credential or card data is removed
 * here, in the logger, rather than trusted to every call site:
 *  - credential-like keys (authorization, cookie, api keys, secrets, passwords,
 *    card security codes) lose their value entirely;
 *  - 13–19 digits in a row, or written in groups the way card numbers are
 *    (a first group of four, then groups of 3–6 separated by one space or
 *    dash: 4-4-4-4, 4-6-5, 4-4-4-4-3), are treated as a card number (PAN) and
 *    keep only their last four digits (PCI DSS 3.4 allows at most the first
 *    six and last four). There is no Luhn check: a mistyped card number is
 *    still card data, and a false positive only costs readability. The
 *    grouping rule is what keeps UUIDs (8-4-4-4-12: request ids, intent ids)
 *    intact even when all their characters happen to be digits;
 *  - email addresses keep the first character of the local part
 *    (a***@example.com): enough to tell customers apart in support, not
 *    enough to contact them;
 *  - "Bearer <token>" inside any text loses its token.
 */

/** The value a redacted key gets. */
export const redactedValue = "[redacted]";

const secretKeyPattern =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|key|token|pan|cvv|cvc|cvv2|cardnumber|card_number|card-number)$|secret|password|passwd|api[-_]?key/i;
/** A digit run, or card-style groups, not part of a longer digit run; maskPan checks there are 13–19 digits. */
const panPattern = /(?<!\d)(?:\d{13,19}|\d{4}(?:[ -]\d{3,6}){2,4})(?!\d)/g;
const emailPattern = /([A-Za-z0-9_!#$%&'*+/=?^`{|}~.-])[A-Za-z0-9_!#$%&'*+/=?^`{|}~.-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})/g;
const bearerPattern = /\b(Bearer)\s+[^\s,;"']+/gi;

/** maskPan keeps the last four digits of a card-number-like run and the grouping. */
function maskPan(run: string): string {
  const digits = run.replace(/\D/g, "").length;
  if (digits < 13 || digits > 19) return run;
  let keep = 4;
  const chars = [...run];
  for (let i = chars.length - 1; i >= 0; i--) {
    if (!/\d/.test(chars[i]!)) continue;
    if (keep > 0) keep -= 1;
    else chars[i] = "*";
  }
  return chars.join("");
}

/** redactText masks card numbers, emails and bearer tokens inside free text. */
export function redactText(text: string): string {
  return text
    .replace(bearerPattern, `$1 ${redactedValue}`)
    .replace(panPattern, maskPan)
    .replace(emailPattern, "$1***@$2");
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
  for (const [key, value] of Object.entries(fields)) {
    out[key] = secretKeyPattern.test(key) && value !== undefined && value !== null ? redactedValue : redactValue(value, depth);
  }
  return out;
}
