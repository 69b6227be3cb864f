import type { Int32Rules, Int64Rules, StringRules } from "../../gen/payments/rules/v1/rules_pb.js";
import { formats } from "./formats.js";

/**
 * A compiled check of one value: undefined when it passes, else the phrase
 * of the failure, "" meaning the field's own phrase.
 */
export type ValueCheck<T> = (value: T) => string | undefined;

/**
 * stringCheck compiles string rules into one check. It decides exactly as the
 * OpenAPI schema generated from the same rules (src/openapi/json-schema.ts):
 * lengths in code points, patterns with the u flag; only a format's checks
 * past its pattern (a URL's host) are the service's alone.
 */
export function stringCheck(rules: StringRules): ValueCheck<string> {
  const checks: ValueCheck<string>[] = [];
  if (rules.const !== undefined) checks.push((v) => (v === rules.const ? undefined : ""));
  if (rules.in.length > 0) {
    const allowed = new Set(rules.in);
    checks.push((v) => (allowed.has(v) ? undefined : ""));
  }
  const min = rules.len ?? rules.minLen;
  const max = rules.len ?? rules.maxLen;
  if (min !== undefined || max !== undefined) {
    checks.push((v) => {
      const length = codePoints(v);
      return (min !== undefined && length < min) || (max !== undefined && length > max) ? "" : undefined;
    });
  }
  if (rules.prefix !== undefined) checks.push((v) => (v.startsWith(rules.prefix!) ? undefined : ""));
  if (rules.pattern !== undefined) {
    const pattern = new RegExp(rules.pattern, "u");
    checks.push((v) => (pattern.test(v) ? undefined : ""));
  }
  const format = rules.wellKnown.case && formats[rules.wellKnown.case];
  if (format) {
    const pattern = new RegExp(format.pattern(rules), "u");
    checks.push((v) => (pattern.test(v) ? undefined : ""));
    if (format.beyond) checks.push((v) => format.beyond!(v, rules));
  }
  return (value) => {
    for (const check of checks) {
      const failure = check(value);
      if (failure !== undefined) return failure;
    }
    return undefined;
  };
}

/** integerCheck compiles int32 or int64 rules into one check. */
export function integerCheck(rules: Int32Rules | Int64Rules): ValueCheck<number | bigint> {
  const { const: only, gte, lte } = rules;
  return (value) => {
    if (only !== undefined && value !== only) return "";
    if (gte !== undefined && value < gte) return "";
    if (lte !== undefined && value > lte) return "";
    return undefined;
  };
}

/** codePoints counts characters as JSON Schema's minLength and maxLength do: a surrogate pair is one. */
export function codePoints(text: string): bigint {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return BigInt(count);
}
