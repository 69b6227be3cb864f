import type { DescField, DescMessage, Message } from "@bufbuild/protobuf";
import { invalid } from "../rules/invalid.js";

/** Checks one decoded request message; throws InvalidArgument naming the first bad field. */
export type StringCheck = (message: Message) => void;

/**
 * unstorable tells whether text holds what no store can keep as sent: a NUL
 * character (PostgreSQL text cannot contain one) or an unpaired UTF-16
 * surrogate (no UTF-8 encoding exists for it).
 */
function unstorable(text: string): boolean {
  return text.includes("\u0000") || !text.isWellFormed();
}

/**
 * createStringChecks compiles, per request message type, a walk over every
 * string field (nested messages and lists included) that refuses client input
 * the stores cannot hold, with 400 naming the field by its JSON path — the
 * same answer on every protocol and for both stores, before any store call.
 */
export function createStringChecks(): { checkFor(schema: DescMessage): StringCheck } {
  const compiled = new Map<string, (message: Record<string, unknown>, path: string) => void>();

  function walkerFor(schema: DescMessage): (message: Record<string, unknown>, path: string) => void {
    let walker = compiled.get(schema.typeName);
    if (walker) return walker;
    let fields: ((message: Record<string, unknown>, path: string) => void)[] = [];
    walker = (message, path) => {
      for (const check of fields) check(message, path);
    };
    compiled.set(schema.typeName, walker);
    fields = schema.fields.flatMap((field) => fieldCheck(field) ?? []);
    return walker;
  }

  function fieldCheck(field: DescField): ((message: Record<string, unknown>, path: string) => void) | undefined {
    const name = field.jsonName;
    const at = (path: string) => (path === "" ? name : `${path}.${name}`);
    const fail = (path: string) => {
      throw invalid(`${path} must not contain NUL characters or unpaired surrogates`);
    };
    if (field.oneof) {
      const oneofName = field.oneof.localName;
      const nested = field.fieldKind === "message" ? walkerFor(field.message) : undefined;
      const isString = field.fieldKind === "scalar" && field.scalar === 9;
      if (!nested && !isString) return undefined;
      return (message, path) => {
        const chosen = message[oneofName] as { case?: string; value?: unknown } | undefined;
        if (chosen?.case !== field.localName) return;
        if (isString && unstorable(chosen.value as string)) fail(at(path));
        if (nested) nested(chosen.value as Record<string, unknown>, at(path));
      };
    }
    const local = field.localName;
    switch (field.fieldKind) {
      case "scalar":
        if (field.scalar !== 9 /* STRING */) return undefined;
        return (message, path) => {
          const value = message[local];
          if (typeof value === "string" && value !== "" && unstorable(value)) fail(at(path));
        };
      case "list":
        if (field.listKind === "message") {
          const nested = walkerFor(field.message);
          return (message, path) => {
            const list = message[local] as Record<string, unknown>[];
            for (let i = 0; i < list.length; i++) nested(list[i]!, `${at(path)}[${i}]`);
          };
        }
        if (field.listKind !== "scalar" || field.scalar !== 9) return undefined;
        return (message, path) => {
          const list = message[local] as string[];
          for (let i = 0; i < list.length; i++) if (unstorable(list[i]!)) fail(`${at(path)}[${i}]`);
        };
      case "message": {
        if (field.message.typeName.startsWith("google.protobuf.")) return undefined;
        const nested = walkerFor(field.message);
        return (message, path) => {
          const value = message[local] as Record<string, unknown> | undefined;
          if (value) nested(value, at(path));
        };
      }
      default:
        return undefined;
    }
  }

  return {
    checkFor(schema) {
      const walker = walkerFor(schema);
      return (message) => walker(message as unknown as Record<string, unknown>, "");
    },
  };
}
