import { ScalarType, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { isStorableText } from "../store/storable-text.js";
import { invalid } from "./invalid.js";
import { messageOf, phraseOf } from "./phrase.js";
import type { RuleReader, ValueRules } from "./rule-reader.js";
import { integerCheck, stringCheck } from "./value-checks.js";

/** Checks one decoded request message in place: fills declared defaults, throws InvalidArgument naming the first bad field. */
export type MessageCheck = (message: Message) => void;

/** RequestChecker runs the proto's field rules on request messages. */
export interface RequestChecker {
  /** The check of a request message type, compiled on first use and kept. */
  checkFor(schema: DescMessage): MessageCheck;
}

export interface RequestCheckerOptions {
  rules: RuleReader;
}

type Walker = (message: Record<string, unknown>, path: string) => void;

/** What every string must be, whatever its field: storable as sent (no NUL, no lone surrogate). */
export function unstorableMessage(path: string): string {
  return `${path} must not contain NUL characters or unpaired surrogates`;
}

/**
 * createRequestChecker compiles, once per request message type, a walk over
 * its fields (nested messages and lists included) that applies the field
 * rules of the proto (payments/rules/v1/rules.proto), field by field in
 * declaration order: first the rule every string has (storable as sent),
 * then the declared default, required, and the type rules. A failure is
 * InvalidArgument whose message starts with the field's JSON path
 * ("settlementAccounts[1].splitAmount must be …"), the same on every
 * protocol, before any procedure or store runs. Rules that need other
 * fields or the stores stay in the services.
 */
export function createRequestChecker(options: RequestCheckerOptions): RequestChecker {
  const compiled = new Map<string, Walker>();

  function walkerFor(schema: DescMessage): Walker {
    let walker = compiled.get(schema.typeName);
    if (walker) return walker;
    let fields: Walker[] = [];
    walker = (message, path) => {
      for (const check of fields) check(message, path);
    };
    compiled.set(schema.typeName, walker);
    fields = schema.fields.flatMap((field) => fieldWalker(field) ?? []);
    return walker;
  }

  function fieldWalker(field: DescField): Walker | undefined {
    const name = field.jsonName;
    const at = (path: string) => (path === "" ? name : `${path}.${name}`);
    const rules = options.rules.rulesOf(field);
    const where = `${field.parent.typeName}.${field.name}`;
    if (field.oneof) {
      if (rules) throw new Error(`${where}: rules on a oneof member are not supported`);
      return oneofWalker(field, at);
    }
    const local = field.localName;
    switch (field.fieldKind) {
      case "scalar":
        return scalarWalker(field, rules, where, at);
      case "list":
        return listWalker(field, rules, where, at);
      case "message": {
        const required = rules?.required ?? false;
        const nested = field.message.typeName.startsWith("google.protobuf.") ? undefined : walkerFor(field.message);
        if (!required && !nested) return undefined;
        return (message, path) => {
          const value = message[local] as Record<string, unknown> | undefined;
          if (value === undefined) {
            if (required) throw invalid(`${at(path)} is required`);
            return;
          }
          nested?.(value, at(path));
        };
      }
      default:
        if (rules) throw new Error(`${where}: rules on ${field.fieldKind} fields are not supported`);
        return undefined;
    }
  }

  function scalarWalker(field: Extract<DescField, { fieldKind: "scalar" }>, rules: ValueRules | undefined, where: string, at: (path: string) => string): Walker | undefined {
    const local = field.localName;
    const isString = field.scalar === ScalarType.STRING;
    const explicit = field.presence === FeatureSet_FieldPresence.EXPLICIT;
    const check = rules?.type && valueCheck(rules, where);
    const fallback = rules?.type && defaultOf(rules);
    if (!isString && !rules) return undefined;
    return (message, path) => {
      let value = message[local];
      if (isString && typeof value === "string" && !isStorableText(value)) throw invalid(unstorableMessage(at(path)));
      if (!rules) return;
      const unset = value === undefined;
      const zero = unset || isZero(value);
      if (fallback !== undefined && (explicit ? unset : zero)) value = message[local] = fallback;
      else if (rules.required && zero) throw invalid(`${at(path)} is required`);
      if (!check || (explicit && unset) || (rules.ignoreZero && zero)) return;
      const failure = check(value);
      if (failure !== undefined) throw invalid(messageOf(at(path), failure));
    };
  }

  function listWalker(field: Extract<DescField, { fieldKind: "list" }>, rules: ValueRules | undefined, where: string, at: (path: string) => string): Walker | undefined {
    const local = field.localName;
    const strings = field.listKind === "scalar" && field.scalar === ScalarType.STRING;
    const nested = field.listKind === "message" && !field.message.typeName.startsWith("google.protobuf.") ? walkerFor(field.message) : undefined;
    const repeated = rules?.type?.kind === "repeated" ? rules.type : undefined;
    const { minItems, maxItems, unique } = repeated?.rules ?? {};
    const counted = minItems !== undefined || maxItems !== undefined;
    const countPhrase = counted ? phraseOf(rules!, where) : "";
    const items = repeated?.items;
    const itemCheck = items?.type && valueCheck(items, `${where} items`);
    if (!strings && !nested && !rules) return undefined;
    return (message, path) => {
      const list = message[local] as unknown[];
      const here = at(path);
      if (strings) {
        for (let i = 0; i < list.length; i++) if (!isStorableText(list[i] as string)) throw invalid(unstorableMessage(`${here}[${i}]`));
      }
      if (rules?.required && list.length === 0) throw invalid(`${here} is required`);
      if (list.length === 0 && (rules?.ignoreZero || !counted)) return;
      if ((minItems !== undefined && list.length < minItems) || (maxItems !== undefined && list.length > maxItems)) {
        throw invalid(messageOf(here, countPhrase));
      }
      if (itemCheck) {
        for (let i = 0; i < list.length; i++) {
          if (items.ignoreZero && isZero(list[i])) continue;
          const failure = itemCheck(list[i]);
          if (failure !== undefined) throw invalid(messageOf(`${here}[${i}]`, failure));
        }
      }
      if (unique) {
        for (let i = 1; i < list.length; i++) {
          if (list.indexOf(list[i]) < i) throw invalid(`${here}[${i}]: "${String(list[i])}" is listed twice`);
        }
      }
      if (nested) for (let i = 0; i < list.length; i++) nested(list[i] as Record<string, unknown>, `${here}[${i}]`);
    };
  }

  /** A oneof member: only the storable-text rule, on the member chosen. */
  function oneofWalker(field: DescField, at: (path: string) => string): Walker | undefined {
    const oneofName = field.oneof!.localName;
    const nested = field.fieldKind === "message" && !field.message.typeName.startsWith("google.protobuf.") ? walkerFor(field.message) : undefined;
    const isString = field.fieldKind === "scalar" && field.scalar === ScalarType.STRING;
    if (!nested && !isString) return undefined;
    return (message, path) => {
      const chosen = message[oneofName] as { case?: string; value?: unknown } | undefined;
      if (chosen?.case !== field.localName) return;
      if (isString && !isStorableText(chosen.value as string)) throw invalid(unstorableMessage(at(path)));
      nested?.(chosen.value as Record<string, unknown>, at(path));
    };
  }

  return {
    checkFor(schema) {
      const walker = walkerFor(schema);
      return (message) => walker(message as unknown as Record<string, unknown>, "");
    },
  };
}

/** The check of one value's type rules, each failure worded with the value's phrase. */
function valueCheck(rules: ValueRules, where: string): ((value: unknown) => string | undefined) | undefined {
  const type = rules.type;
  if (!type || type.kind === "repeated") return undefined;
  const phrase = phraseOf(rules, where);
  const check = type.kind === "string" ? stringCheck(type.rules) : integerCheck(type.rules);
  return (value) => {
    const failure = (check as (v: unknown) => string | undefined)(value);
    return failure === undefined ? undefined : failure === "" ? phrase : failure;
  };
}

/** The declared default of a value, if any. */
function defaultOf(rules: ValueRules): unknown {
  const type = rules.type;
  return type && type.kind !== "repeated" ? type.rules.default : undefined;
}

function isZero(value: unknown): boolean {
  return value === "" || value === 0 || value === 0n || value === false || value === undefined;
}
