import { ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, type Timestamp } from "@bufbuild/protobuf/wkt";
import { createIsoTime } from "../../lib/iso-time.js";

/** Encodes one message as REST JSON text. */
export type RestEncoder = (message: object) => string;

/**
 * RestEncoders renders response messages as the REST contract shows them.
 * It is proto3 JSON (int64 as strings, JSON names) with three refinements a
 * REST client can rely on:
 *  - every field with presence (a message, or a proto3 optional scalar) is
 *    always present, as null when unset, so a resource has a stable shape;
 *  - repeated fields are always present, [] when empty;
 *  - timestamps are RFC 3339 UTC with exactly three fractional digits.
 * Plain scalars at their zero value are left out, as in proto3 JSON; that is
 * how nextPageToken appears only when another page exists.
 *
 * Each message type's encoder is generated once, on first use, as a function
 * of its own (as fast-json-stringify does for Fastify): it reads each field by
 * name and writes the text directly, so a response costs no descriptor walk,
 * no intermediate JSON object and no generic property lookups. The generated
 * source names only the descriptor's field names, which are checked to be
 * identifiers; no request data ever reaches it.
 */
export interface RestEncoders {
  encoderFor(schema: DescMessage): RestEncoder;
}

/** What the generated functions call. */
interface Helpers {
  str: (value: unknown) => string;
  timestamp: (value: Timestamp) => string;
  isZero: (value: unknown) => boolean;
  bytes: (value: Uint8Array) => string;
  enums: ReadonlyMap<number, string>[];
  /** Encoders of nested message types, looked up on first call (a type may contain itself). */
  nested: RestEncoder[];
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** createRestEncoders makes an encoder cache for one app (no module-level state). */
export function createRestEncoders(): RestEncoders {
  const compiled = new Map<string, RestEncoder>();
  const isoTime = createIsoTime();

  function encoderFor(schema: DescMessage): RestEncoder {
    let encoder = compiled.get(schema.typeName);
    if (!encoder) {
      encoder = generate(schema);
      compiled.set(schema.typeName, encoder);
    }
    return encoder;
  }

  function generate(schema: DescMessage): RestEncoder {
    const helpers: Helpers = {
      str: JSON.stringify,
      timestamp: (value) => `"${isoTime(Number(value.seconds) * 1000 + Math.floor(value.nanos / 1_000_000))}"`,
      isZero,
      bytes: (value) => `"${Buffer.from(value).toString("base64")}"`,
      enums: [],
      nested: [],
    };
    const body = ['let o = "{", sep = "", v;'];
    for (const field of schema.fields) body.push(fieldCode(schema, field, helpers));
    body.push('return o + "}";');
    return new Function("h", `"use strict"; return function encode(m) {\n${body.join("\n")}\n};`)(helpers) as RestEncoder;
  }

  /** The code that writes one field (and the separator before it), or writes nothing when it is left out. */
  function fieldCode(schema: DescMessage, field: DescField, helpers: Helpers): string {
    if (field.oneof) throw new Error(`${schema.typeName}: oneof fields are not supported over REST`);
    if (!identifier.test(field.localName)) throw new Error(`${schema.typeName}.${field.name}: not an identifier`);
    const key = JSON.stringify(`${JSON.stringify(field.jsonName)}:`);
    const read = `v = m.${field.localName};`;
    const put = (expression: string) => `o += sep + ${key} + ${expression}; sep = ",";`;
    switch (field.fieldKind) {
      case "list": {
        const item = field.listKind === "message" ? messageCode(field.message, "v[i]", helpers) : scalarCode(field, "v[i]", helpers);
        return `${read} o += sep + ${key} + "["; for (let i = 0; i < v.length; i++) { if (i > 0) o += ","; o += ${item}; } o += "]"; sep = ",";`;
      }
      case "message":
        return `${read} ${put(`(v === undefined || v === null ? "null" : ${messageCode(field.message, "v", helpers)})`)}`;
      case "map":
        throw new Error(`${schema.typeName}: map fields are not supported over REST`);
      default:
        if (field.presence === FeatureSet_FieldPresence.EXPLICIT) {
          return `${read} ${put(`(v === undefined || v === null ? "null" : ${scalarCode(field, "v", helpers)})`)}`;
        }
        return `${read} if (!h.isZero(v)) { ${put(scalarCode(field, "v", helpers))} }`;
    }
  }

  function messageCode(schema: DescMessage, value: string, helpers: Helpers): string {
    switch (schema.typeName) {
      case "google.protobuf.Timestamp":
        return `h.timestamp(${value})`;
      // protobuf-es holds Struct, Value and ListValue fields as plain JSON already.
      case "google.protobuf.Struct":
      case "google.protobuf.Value":
      case "google.protobuf.ListValue":
        return `h.str(${value})`;
    }
    if (schema.typeName.startsWith("google.protobuf.")) throw new Error(`${schema.typeName} is not supported over REST`);
    const index = helpers.nested.length;
    // Resolved on first call: the nested type's encoder may not be generated yet.
    helpers.nested.push((message) => (helpers.nested[index] = encoderFor(schema))(message));
    return `h.nested[${index}](${value})`;
  }

  function scalarCode(field: DescField, value: string, helpers: Helpers): string {
    if (field.enum) {
      const index = helpers.enums.length;
      helpers.enums.push(enumNames(field.enum));
      return `(h.enums[${index}].get(${value}) ?? String(${value}))`;
    }
    switch (field.scalar) {
      case ScalarType.INT64:
      case ScalarType.SINT64:
      case ScalarType.SFIXED64:
      case ScalarType.UINT64:
      case ScalarType.FIXED64:
        return `('"' + ${value} + '"')`;
      case ScalarType.BYTES:
        return `h.bytes(${value})`;
      case ScalarType.STRING:
      case ScalarType.DOUBLE:
      case ScalarType.FLOAT:
        return `h.str(${value})`;
      default:
        return `String(${value})`;
    }
  }

  return { encoderFor };
}

function enumNames(desc: DescEnum): ReadonlyMap<number, string> {
  return new Map(desc.values.map((v) => [v.number, JSON.stringify(v.name)]));
}

function isZero(value: unknown): boolean {
  if (value === undefined || value === null || value === "" || value === 0 || value === 0n || value === false) return true;
  return value instanceof Uint8Array && value.length === 0;
}
