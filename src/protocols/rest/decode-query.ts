import { ScalarType, type DescMessage } from "@bufbuild/protobuf";
import { invalid } from "../../rules/invalid.js";
import { isEntryList } from "./entry-list.js";

/** A parameter that names an entry of a list: field[name]. */
const entryKey = /^([A-Za-z][A-Za-z0-9]*)\[(.*)\]$/s;

/**
 * decodeRestQuery maps query parameters onto singular scalar fields by their
 * JSON names, as grpc-gateway does for GET routes, and `field[name]=value`
 * onto the entries of a name/value list (entry-list.ts), in the order given.
 * Fields bound by the path are excluded; unknown or repeated parameters are
 * InvalidArgument, so a typo such as "page_size" fails loudly instead of
 * silently using the default. The entries' own rules (lengths, counts, each
 * name once) are the field rules and the service's, as over every protocol.
 */
export function decodeRestQuery(
  schema: DescMessage,
  params: URLSearchParams,
  boundByPath: readonly string[],
): Record<string, unknown> {
  const init: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const [key, value] of params) {
    const entry = entryKey.exec(key);
    if (entry) {
      const [, jsonName, name] = entry as unknown as [string, string, string];
      const field = schema.fields.find((f) => f.jsonName === jsonName && !boundByPath.includes(f.name));
      if (!field || !isEntryList(field)) throw invalid(`unknown query parameter ${key}`);
      if (seen.has(key)) throw invalid(`query parameter ${key} is given more than once`);
      seen.add(key);
      const list = (init[field.localName] ??= []) as { name: string; value: string }[];
      list.push({ name, value });
      continue;
    }
    const field = schema.fields.find((f) => f.jsonName === key && !boundByPath.includes(f.name));
    if (!field || field.fieldKind !== "scalar" || field.oneof) throw invalid(`unknown query parameter ${key}`);
    if (seen.has(key)) throw invalid(`query parameter ${key} is given more than once`);
    seen.add(key);
    init[field.localName] = decodeQueryScalar(field.scalar, value, key);
  }
  return init;
}

function decodeQueryScalar(type: ScalarType, value: string, name: string): unknown {
  switch (type) {
    case ScalarType.STRING:
      return value;
    case ScalarType.BOOL:
      if (value !== "true" && value !== "false") throw invalid(`${name} must be true or false`);
      return value === "true";
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32: {
      const number = /^-?\d{1,10}$/.test(value) ? Number(value) : NaN;
      if (!Number.isInteger(number) || number < -(2 ** 31) || number > 2 ** 31 - 1) {
        throw invalid(`${name} must be an integer`);
      }
      return number;
    }
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      if (!/^-?\d{1,18}$/.test(value)) throw invalid(`${name} must be an integer`);
      return BigInt(value);
    default:
      throw invalid(`query parameter ${name} is not supported`);
  }
}
