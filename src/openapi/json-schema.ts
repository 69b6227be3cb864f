import type { Int32Rules, Int64Rules, StringRules } from "../../gen/payments/rules/v1/rules_pb.js";
import { escapeRegExp, formats } from "../rules/formats.js";
import type { TypeRules } from "../rules/rule-reader.js";

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = { [key: string]: unknown };

/** Which side of the API a schema describes: a REST request (int64 is a JSON integer) or a response (int64 is a string of digits). */
export type Direction = "input" | "output";

/**
 * scalarSchema is the JSON Schema of a string or integer value with its type
 * rules: the same rules the checker compiles (src/rules/value-checks.ts),
 * written in the keywords every OpenAPI tool reads. A named format becomes
 * its pattern (a `format` keyword would let each tool apply its own idea of
 * an email address or a URL).
 */
export function scalarSchema(kind: "string" | "int32" | "int64", type: TypeRules | undefined, direction: Direction): JsonSchema {
  if (kind === "string") return stringSchema(type?.kind === "string" ? type.rules : undefined);
  const rules = type?.kind === "int32" || type?.kind === "int64" ? type.rules : undefined;
  if (kind === "int64" && direction === "output") return { type: "string", pattern: int64Pattern(rules) };
  return integerSchema(rules);
}

function stringSchema(rules: StringRules | undefined): JsonSchema {
  const schema: JsonSchema = { type: "string" };
  if (!rules) return schema;
  if (rules.const !== undefined) schema["const"] = rules.const;
  if (rules.in.length > 0) schema["enum"] = [...rules.in];
  const min = rules.len ?? rules.minLen;
  const max = rules.len ?? rules.maxLen;
  if (min !== undefined) schema["minLength"] = Number(min);
  if (max !== undefined) schema["maxLength"] = Number(max);
  const format = rules.wellKnown.case;
  const patterns = [
    // The uuid7 format's pattern starts with the prefix already.
    ...(rules.prefix !== undefined && format !== "uuid7" ? [`^${escapeRegExp(rules.prefix)}`] : []),
    ...(rules.pattern !== undefined ? [rules.pattern] : []),
    ...(format ? [formats[format].pattern(rules)] : []),
  ];
  if (patterns.length === 1) schema["pattern"] = patterns[0];
  if (patterns.length > 1) schema["allOf"] = patterns.map((pattern) => ({ pattern }));
  return schema;
}

function integerSchema(rules: Int32Rules | Int64Rules | undefined): JsonSchema {
  const schema: JsonSchema = { type: "integer" };
  if (rules?.const !== undefined) schema["const"] = Number(rules.const);
  if (rules?.gte !== undefined) schema["minimum"] = Number(rules.gte);
  if (rules?.lte !== undefined) schema["maximum"] = Number(rules.lte);
  return schema;
}

/** The pattern of an int64 written as a string of digits, exact to its bounds (a regular expression cannot compare numbers). */
function int64Pattern(rules: Int32Rules | Int64Rules | undefined): string {
  if (rules?.const !== undefined) return `^${rules.const}$`;
  const gte = rules?.gte === undefined ? undefined : BigInt(rules.gte);
  const lte = rules?.lte === undefined ? undefined : BigInt(rules.lte);
  if (gte === undefined || gte < 0n || (lte !== undefined && lte < gte)) return "^(?:0|-?[1-9][0-9]*)$";
  if (lte === undefined) return gte === 0n ? "^(?:0|[1-9][0-9]*)$" : `^(?:${rangeAlternatives(gte, 10n ** BigInt(String(gte).length) - 1n).join("|")}|[1-9][0-9]{${String(gte).length},})$`;
  return `^(?:${rangeAlternatives(gte, lte).join("|")})$`;
}

/** rangeAlternatives are patterns that together match exactly the decimal numbers from lo to hi (0 ≤ lo ≤ hi). */
export function rangeAlternatives(lo: bigint, hi: bigint): string[] {
  const out: string[] = [];
  /** Lengths whose every number is in range, collected so "[1-9][0-9]{0,11}" stands for many of them. */
  let full: [number, number] | undefined;
  const flush = () => {
    if (!full) return;
    const [from, to] = full;
    out.push(from === to ? `[1-9]${repeat(from - 1)}` : `[1-9][0-9]{${from - 1},${to - 1}}`);
    full = undefined;
  };
  const loDigits = String(lo).length;
  const hiDigits = String(hi).length;
  for (let length = loDigits; length <= hiDigits; length++) {
    const from = length === loDigits ? String(lo) : `1${"0".repeat(length - 1)}`;
    const to = length === hiDigits ? String(hi) : "9".repeat(length);
    if (from === `1${"0".repeat(length - 1)}` && to === "9".repeat(length) && !(length === 1 && lo === 0n)) {
      full = full ? [full[0], length] : [length, length];
      continue;
    }
    flush();
    out.push(...sameLength(from, to));
  }
  flush();
  return out;
}

/** Patterns for the numbers from lo to hi, both of the same number of digits. */
function sameLength(lo: string, hi: string): string[] {
  const n = lo.length;
  if (lo === hi) return [lo];
  if (lo[0] === hi[0]) return sameLength(lo.slice(1), hi.slice(1)).map((p) => lo[0] + p);
  const zeros = "0".repeat(n - 1);
  const nines = "9".repeat(n - 1);
  const out: string[] = [];
  let start = Number(lo[0]);
  let end = Number(hi[0]);
  if (lo.slice(1) !== zeros) {
    out.push(...sameLength(lo.slice(1), nines).map((p) => lo[0] + p));
    start++;
  }
  const hiFull = hi.slice(1) === nines;
  if (!hiFull) end--;
  if (start <= end) out.push(`${start === end ? String(start) : `[${start}-${end}]`}${repeat(n - 1)}`);
  if (!hiFull) out.push(...sameLength(zeros, hi.slice(1)).map((p) => hi[0] + p));
  return out;
}

function repeat(digits: number): string {
  return digits === 0 ? "" : digits === 1 ? "[0-9]" : `[0-9]{${digits}}`;
}
