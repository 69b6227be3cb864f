import { isFieldSet, ScalarType, toJson, type DescField, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";

/**
 * encodeRestJson renders a response message as the REST contract shows it.
 * It is proto3 JSON (int64 as strings, JSON names) with three refinements a
 * REST client can rely on:
 *  - every field with presence (a message, or a proto3 optional scalar) is
 *    always present, as null when unset, so a resource has a stable shape;
 *  - repeated fields are always present, [] when empty;
 *  - timestamps are RFC 3339 UTC with exactly three fractional digits.
 * Plain scalars at their zero value are left out, as in proto3 JSON; that is
 * how nextPageToken appears only when another page exists.
 */
export function encodeRestJson(schema: DescMessage, message: Message): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  const values = message as unknown as Record<string, unknown>;
  for (const field of schema.fields) {
    if (field.oneof) throw new Error(`${schema.typeName}: oneof fields are not supported over REST`);
    const value = values[field.localName];
    switch (field.fieldKind) {
      case "list":
        out[field.jsonName] = (value as unknown[]).map((item) =>
          field.listKind === "message" ? encodeMessage(field.message, item as Message) : encodeScalarOrEnum(field, item),
        );
        break;
      case "message":
        out[field.jsonName] = isFieldSet(message, field) ? encodeMessage(field.message, value as Message) : null;
        break;
      case "map":
        throw new Error(`${schema.typeName}: map fields are not supported over REST`);
      default:
        if (field.presence === FeatureSet_FieldPresence.EXPLICIT) {
          out[field.jsonName] = isFieldSet(message, field) ? encodeScalarOrEnum(field, value) : null;
        } else if (isFieldSet(message, field)) {
          out[field.jsonName] = encodeScalarOrEnum(field, value);
        }
    }
  }
  return out;
}

const jsonTypes = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

function encodeMessage(schema: DescMessage, message: Message): JsonValue {
  if (schema.typeName === "google.protobuf.Timestamp") return timestampDate(message as Timestamp).toISOString();
  // protobuf-es holds Struct, Value and ListValue fields as plain JSON already.
  if (jsonTypes.has(schema.typeName)) return message as unknown as JsonValue;
  if (schema.typeName.startsWith("google.protobuf.")) return toJson(schema, message);
  return encodeRestJson(schema, message);
}

function encodeScalarOrEnum(field: DescField, value: unknown): JsonValue {
  if (field.enum) {
    return field.enum.values.find((v) => v.number === value)?.name ?? (value as number);
  }
  switch (field.scalar) {
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return String(value);
    case ScalarType.BYTES:
      return Buffer.from(value as Uint8Array).toString("base64");
    default:
      return value as JsonValue;
  }
}
