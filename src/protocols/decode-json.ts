import { fromJson, ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { invalid } from "../rules/invalid.js";

/**
 * FieldAdapter rewrites one field's JSON value before decoding, for REST
 * spellings the proto type cannot express (an item given as {"type": "card"}
 * where the proto has the name "card"). Keyed by the field's full name.
 */
export type FieldAdapter = (value: unknown, path: string) => unknown;
export type FieldAdapters = ReadonlyMap<string, FieldAdapter>;

/** How strictly JSON values map onto proto fields. */
export interface JsonDecodeOptions {
  /**
   * proto3 JSON (Connect, gRPC with the JSON codec) also accepts integers
   * written as strings of decimal digits, and fields by their proto name
   * (client_reference as well as clientReference). The REST contract says
   * amount is a JSON integer, so REST accepts neither.
   */
  proto3: boolean;
  /**
   * Skip keys the message does not declare, as binary protobuf skips unknown
   * fields: the RPC protocols do (like connect-go and connect-es servers), so
   * a client built from a newer proto keeps working over JSON. REST's
   * contract refuses them.
   */
  ignoreUnknownFields?: boolean;
  adapters?: FieldAdapters;
}

const restOptions: JsonDecodeOptions = { proto3: false };

/**
 * decodeRestJson maps a parsed JSON body onto a message's fields, strictly:
 * it refuses numbers given as strings, booleans for numbers, fractions, and any
 * key the message does not declare. null means "absent". Every failure is
 * InvalidArgument naming the field by its JSON path.
 */
export function decodeRestJson(schema: DescMessage, json: unknown, adapters: FieldAdapters = new Map()): Record<string, unknown> {
  return decodeJsonMessage(schema, json, adapters.size > 0 ? { proto3: false, adapters } : restOptions);
}

/**
 * decodeJsonMessage is the one JSON decoder of request messages, for REST
 * (strict) and proto3 JSON alike: the same names, checks and messages, so a
 * client sees the same 400 whichever protocol it speaks. It returns a message
 * init (defaults are left to create()).
 */
export function decodeJsonMessage(schema: DescMessage, json: unknown, options: JsonDecodeOptions, path = ""): Record<string, unknown> {
  if (!isPlainObject(json)) {
    throw invalid(path === "" ? "request body must be a JSON object" : `${path} must be an object`);
  }
  const init: Record<string, unknown> = {};
  for (const key in json) {
    const raw = json[key];
    const fieldPath = path === "" ? key : `${path}.${key}`;
    const field = schema.fields.find((f) => f.jsonName === key || (options.proto3 && f.name === key));
    if (!field && options.ignoreUnknownFields) continue;
    if (!field || field.oneof) throw invalid(`unknown field ${fieldPath}`);
    if (field.localName in init) throw invalid(`${fieldPath} is given more than once`);
    const adapter = options.adapters?.get(`${schema.typeName}.${field.name}`);
    const value = adapter ? adapter(raw, fieldPath) : raw;
    if (value === null) continue;
    init[field.localName] = decodeField(field, value, fieldPath, options);
  }
  return init;
}

function decodeField(field: DescField, value: unknown, path: string, options: JsonDecodeOptions): unknown {
  switch (field.fieldKind) {
    case "scalar":
      return decodeScalar(field.scalar, value, path, options.proto3);
    case "message":
      return decodeMessage(field.message, value, path, options);
    case "enum":
      return decodeEnum(field, value, path, options.proto3);
    case "list": {
      if (!Array.isArray(value)) throw invalid(`${path} must be an array`);
      return value.map((item, index) => {
        const itemPath = `${path}[${index}]`;
        if (item === null) throw invalid(`${itemPath} must not be null`);
        if (field.listKind === "scalar") return decodeScalar(field.scalar, item, itemPath, options.proto3);
        if (field.listKind === "message") return decodeMessage(field.message, item, itemPath, options);
        if (field.listKind === "enum") return decodeEnum(field, item, itemPath, options.proto3);
        throw invalid(`${itemPath} is not supported over REST`);
      });
    }
    case "map":
      throw invalid(`${path} is not supported over REST`);
  }
}

function decodeEnum(field: DescField, value: unknown, path: string, proto3: boolean): number {
  const values = field.enum!.values;
  const found = typeof value === "string" ? values.find((v) => v.name === value) : proto3 && typeof value === "number" ? values.find((v) => v.number === value) : undefined;
  if (!found) throw invalid(`${path} must be one of ${values.map((v) => v.name).join(", ")}`);
  return found.number;
}

function decodeMessage(schema: DescMessage, value: unknown, path: string, options: JsonDecodeOptions): unknown {
  // Well-known types keep their proto3 JSON form (a Struct is any object).
  if (schema.typeName.startsWith("google.protobuf.")) {
    try {
      return fromJson(schema, value as never);
    } catch {
      throw invalid(`${path} is not a valid ${schema.name}`);
    }
  }
  return decodeJsonMessage(schema, value, options, path);
}

const int32Range = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const uint32Range = { min: 0, max: 2 ** 32 - 1 };

/** Integers written as strings (proto3 JSON): decimal digits only, never "0x3E8", "+5" or " 7 ". */
const integerText = /^-?[0-9]+$/;

/** integerOf reads a JSON integer, or in proto3 JSON its decimal string; undefined when it is neither. */
function integerOf(value: unknown, proto3: boolean): number | bigint | undefined {
  if (typeof value === "number") return Number.isInteger(value) ? value : undefined;
  if (proto3 && typeof value === "string" && integerText.test(value) && value.length <= 21) return BigInt(value);
  return undefined;
}

function decodeScalar(type: ScalarType, value: unknown, path: string, proto3: boolean): unknown {
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
    case ScalarType.FIXED64: {
      // JSON numbers beyond 2^53 have already lost precision in parsing; refuse
      // them rather than store a different amount than the client sent.
      const integer = integerOf(value, proto3);
      if (integer === undefined || (typeof integer === "number" && !Number.isSafeInteger(integer))) {
        throw invalid(`${path} must be an integer${typeof integer === "number" ? " of at most 2^53-1" : sentAString(value, proto3)}`);
      }
      const big = BigInt(integer);
      const unsigned = type === ScalarType.UINT64 || type === ScalarType.FIXED64;
      if (big > (unsigned ? 2n ** 64n - 1n : 2n ** 63n - 1n) || big < (unsigned ? 0n : -(2n ** 63n))) throw invalid(`${path} is out of range`);
      return big;
    }
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
    case ScalarType.UINT32:
    case ScalarType.FIXED32: {
      const range = type === ScalarType.UINT32 || type === ScalarType.FIXED32 ? uint32Range : int32Range;
      const integer = integerOf(value, proto3);
      if (integer === undefined || integer < range.min || integer > range.max) {
        throw invalid(`${path} must be an integer${integer === undefined ? sentAString(value, proto3) : ""}`);
      }
      return Number(integer);
    }
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      if (typeof value !== "number") throw invalid(`${path} must be a number`);
      return value;
    case ScalarType.BYTES:
      throw invalid(`${path} is not supported over REST`);
  }
}

/**
 * sentAString completes the REST message for an integer field given a
 * string, the commonest slip ("amount": "50000"): it says what was wrong,
 * never echoing the value. proto3 JSON takes digit strings, so there the
 * string was wrong for its contents, not for being one.
 */
function sentAString(value: unknown, proto3: boolean): string {
  return typeof value === "string" && !proto3 ? ", but a string was sent: write the number without quotes" : "";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
