import type { StringRules } from "../../gen/payments/rules/v1/rules_pb.js";
import { readHttpUrl, unsafeInUrl } from "./http-url.js";

/** The names of the formats a StringRules can name (its well_known case). */
export type FormatName = NonNullable<StringRules["wellKnown"]["case"]>;

/**
 * Format is one named string format. Its pattern is what the OpenAPI
 * document says and what the checker tests first, so both accept the same
 * values; beyond is what no pattern can say (a URL's host and credentials),
 * which the document states in words.
 */
export interface Format {
  /** An anchored ECMAScript pattern (u flag) every value of the format matches. */
  pattern(rules: StringRules): string;
  /**
   * The checks past the pattern: undefined when value passes, else the phrase
   * of the failure ("" for the field's own phrase).
   */
  beyond?(value: string, rules: StringRules): string | undefined;
  /** The phrase a field of this format gets when the proto words none. */
  phrase(rules: StringRules): string;
}

/** escapeRegExp makes text match itself in a pattern (with the u flag, only syntax characters may be escaped). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const control = "\\u0000-\\u001f\\u007f";
const lengths = (rules: StringRules) =>
  rules.minLen !== undefined && rules.maxLen !== undefined ? `{min_len} to {max_len} characters` : rules.maxLen !== undefined ? "at most {max_len} characters" : "characters";

/** The formats by name: one implementation each, shared by the checker and the OpenAPI generator. */
export const formats: Readonly<Record<FormatName, Format>> = {
  // WHATWG's valid e-mail address, a local part of at most 64 characters
  // (RFC 5321 §4.5.3.1.1) and a dot in the domain: what a mail provider takes,
  // without RFC 5322's comments and quoted strings.
  email: {
    pattern: () =>
      "^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$",
    phrase: (rules) => (rules.maxLen !== undefined ? "must be a valid email address of at most {max_len} characters" : "must be a valid email address"),
  },
  httpUrl: {
    pattern: () => `^[Hh][Tt][Tt][Pp][Ss]?://[^${unsafeInUrl}]+$`,
    beyond(value, rules) {
      const read = readHttpUrl(value, rules.maxLen === undefined ? Infinity : Number(rules.maxLen));
      if (read === "host") return "must name its host as a DNS name or an IP address";
      if (read === "credentials") return "must not carry credentials";
      return read === "syntax" ? "" : undefined;
    },
    phrase: (rules) => `must be an absolute http or https URL${rules.maxLen !== undefined ? " of at most {max_len} characters" : ""}`,
  },
  // Not only white space (as String.prototype.trim sees it), no control character.
  text: {
    pattern: () => `^[^${control}]*[^\\s${control}][^${control}]*$`,
    phrase: (rules) => `must be ${lengths(rules)} of text`,
  },
  // A prefixed id made since modes (issue 23, §1) names its mode after the
  // prefix (pi_test_…, pi_live_…); ids made before have none and stay valid.
  uuid7: {
    pattern: (rules) => `^${rules.prefix !== undefined ? `${escapeRegExp(rules.prefix)}(?:test_|live_)?` : ""}[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`,
    phrase: () => "must be {prefix} followed by a UUIDv7 (after test_ or live_ in ids that show their mode)",
  },
};
