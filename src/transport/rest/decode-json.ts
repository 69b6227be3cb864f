import { fromJson, ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { invalid } from "../../service/field-rules.js";

/**
 * FieldAdapter rewrites one field's JSON value before decoding, for REST
 * spellings the proto type cannot express (an item given as {"type": "card"}
 * where the proto has the name "card"). Keyed by the field's full name.
 */
export type FieldAdapter = (value: unknown, path: string) => unknown;
export type FieldAdapters = ReadonlyMap<string, FieldAdapter>;

/**
 * decodeRestJson maps a parsed JSON body onto a message's fields, strictly:
 * the REST contract says amount is a JSON integer, so unlike proto3 JSON it
 * refuses numbers given as strings, booleans for numbers, fractions, and any
 * key the message does not declare. null means "absent". Every failure is
 * InvalidArgument naming the field by its JSON path.
 */
export function decodeRestJson(
  schema: DescMessage,
  json: unknown,
  adapters: FieldAdapters = new Map(),
  path = "",
): Record<string, unknown> {
  if (!isPlainObject(json)) {
    throw invalid(path === "" ? "request body must be a JSON object" : `${path} must be an object`);
  }
  const init: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(json)) {
    const fieldPath = path === "" ? key : `${path}.${key}`;
    const field = schema.fields.find((f) => f.jsonName === key);
    if (!field || field.oneof) throw invalid(`unknown field ${fieldPath}`);
    const adapter = adapters.get(`${schema.typeName}.${field.name}`);
    const value = adapter ? adapter(raw, fieldPath) : raw;
    if (value === null) continue;
    init[field.localName] = decodeField(field, value, fieldPath, adapters);
  }
  return init;
}

function decodeField(field: DescField, value: unknown, path: string, adapters: FieldAdapters): unknown {
  switch (field.fieldKind) {
    case "scalar":
      return decodeScalar(field.scalar, value, path);
    case "message":
      return decodeMessage(field.message, value, path, adapters);
    case "enum":
      if (typeof value !== "string" || !field.enum.values.some((v) => v.name === value)) {
        throw invalid(`${path} must be one of ${field.enum.values.map((v) => v.name).join(", ")}`);
      }
      return field.enum.values.find((v) => v.name === value)!.number;
    case "list": {
      if (!Array.isArray(value)) throw invalid(`${path} must be an array`);
      return value.map((item, index) => {
        const itemPath = `${path}[${index}]`;
        if (item === null) throw invalid(`${itemPath} must not be null`);
        if (field.listKind === "scalar") return decodeScalar(field.scalar, item, itemPath);
        if (field.listKind === "message") return decodeMessage(field.message, item, itemPath, adapters);
        throw invalid(`${itemPath} is not supported over REST`);
      });
    }
    case "map":
      throw invalid(`${path} is not supported over REST`);
  }
}

function decodeMessage(schema: DescMessage, value: unknown, path: string, adapters: FieldAdapters): unknown {
  // Well-known types keep their proto3 JSON form (a Struct is any object).
  if (schema.typeName.startsWith("google.protobuf.")) {
    try {
      return fromJson(schema, value as never);
    } catch {
      throw invalid(`${path} is not a valid ${schema.name}`);
    }
  }
  return decodeRestJson(schema, value, adapters, path);
}

const int32Range = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const uint32Range = { min: 0, max: 2 ** 32 - 1 };

function decodeScalar(type: ScalarType, value: unknown, path: string): unknown {
  switch (type) {
    case ScalarType.STRING:
      if (typeof value !== "string") throw invalid(`${path} must be a string`);
      return value;
    case ScalarType.BOOL:
      if (typeof value !== "boolean") throw invalid(`${path} must be true or false`);
      return value;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      // JSON numbers beyond 2^53 have already lost precision in parsing; refuse
      // them rather than store a different amount than the client sent.
      if (typeof value !== "number" || !Number.isSafeInteger(value)) {
        throw invalid(`${path} must be an integer${typeof value === "number" && Number.isInteger(value) ? " of at most 2^53-1" : ""}`);
      }
      return BigInt(value);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
    case ScalarType.UINT32:
    case ScalarType.FIXED32: {
      const range = type === ScalarType.UINT32 || type === ScalarType.FIXED32 ? uint32Range : int32Range;
      if (typeof value !== "number" || !Number.isInteger(value) || value < range.min || value > range.max) {
        throw invalid(`${path} must be an integer`);
      }
      return value;
    }
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      if (typeof value !== "number") throw invalid(`${path} must be a number`);
      return value;
    case ScalarType.BYTES:
      throw invalid(`${path} is not supported over REST`);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
