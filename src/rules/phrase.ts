import type { TypeRules, ValueRules } from "./rule-reader.js";
import { formats } from "./formats.js";

/**
 * phraseOf is what a 400 message says after the field's JSON path when one of
 * the value's type rules fails: the proto's phrase, or one worded from the
 * rules, with every placeholder filled from the rules' own values, so a
 * bound is written once (in the rule) and the message follows it.
 */
export function phraseOf(value: ValueRules, where: string): string {
  const type = value.type;
  if (!type) throw new Error(`${where}: a phrase needs type rules`);
  return fill(value.phrase ?? defaultPhrase(type, where), type, where);
}

/** messageOf puts a phrase after a path: "amount must be …", or "currency: only NGN is supported". */
export function messageOf(path: string, phrase: string): string {
  return phrase.startsWith(":") ? `${path}${phrase}` : `${path} ${phrase}`;
}

/** The values a phrase may name, by placeholder. */
function placeholders(type: TypeRules): Record<string, string | undefined> {
  const text = (value: bigint | number | string | undefined) => (value === undefined ? undefined : String(value));
  switch (type.kind) {
    case "string": {
      const r = type.rules;
      return {
        const: r.const,
        len: text(r.len),
        min_len: text(r.minLen),
        max_len: text(r.maxLen),
        prefix: r.prefix,
        in: r.in.length > 0 ? r.in.join(", ") : undefined,
      };
    }
    case "int32":
    case "int64":
      return { const: text(type.rules.const), gte: text(type.rules.gte), lte: text(type.rules.lte) };
    case "repeated":
      return { min_items: text(type.rules.minItems), max_items: text(type.rules.maxItems) };
  }
}

function fill(phrase: string, type: TypeRules, where: string): string {
  const values = placeholders(type);
  return phrase.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${where}: the phrase names {${name}}, which its rules do not set`);
    return value;
  });
}

/** The phrase worded from the rules when the proto gives none; a pattern needs one from the proto. */
function defaultPhrase(type: TypeRules, where: string): string {
  switch (type.kind) {
    case "string": {
      const r = type.rules;
      if (r.const !== undefined) return "must be {const}";
      if (r.in.length === 1) return `must be ${r.in[0]}`;
      if (r.in.length === 2) return `must be ${r.in[0]} or ${r.in[1]}`;
      if (r.in.length > 2) return "must be one of {in}";
      if (r.pattern !== undefined) throw new Error(`${where}: a pattern needs a phrase`);
      if (r.wellKnown.case !== undefined) return formats[r.wellKnown.case].phrase(r);
      if (r.len !== undefined) return "must be exactly {len} characters";
      if (r.minLen !== undefined && r.maxLen !== undefined) return "must be {min_len} to {max_len} characters";
      if (r.maxLen !== undefined) return "must be at most {max_len} characters";
      if (r.minLen !== undefined) return "must be at least {min_len} characters";
      throw new Error(`${where}: string rules that say nothing`);
    }
    case "int32":
    case "int64": {
      const r = type.rules;
      if (r.const !== undefined) return "must be {const}";
      if (r.gte !== undefined && r.lte !== undefined) return "must be an integer from {gte} to {lte}";
      if (r.gte !== undefined) return "must be an integer of at least {gte}";
      if (r.lte !== undefined) return "must be an integer of at most {lte}";
      throw new Error(`${where}: integer rules that say nothing`);
    }
    case "repeated": {
      const r = type.rules;
      if (r.minItems !== undefined && r.maxItems !== undefined) return "must list {min_items} to {max_items} items";
      if (r.maxItems !== undefined) return "may list at most {max_items} items";
      if (r.minItems !== undefined) return "must list at least {min_items} items";
      return "";
    }
  }
}
