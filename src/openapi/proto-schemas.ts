import { ScalarType, type DescField, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import type { RuleReader, ValueRules } from "../rules/rule-reader.js";
import { integerCheck, stringCheck } from "../rules/value-checks.js";
import { scalarSchema, type Direction, type JsonSchema } from "./json-schema.js";

/**
 * Describe gives the proto comment of a service, method, message or field
 * (protoc's source info, which the plugin has and the generated code does
 * not); undefined when there is none.
 */
export type Describe = (desc: DescService | DescMethod | DescMessage | DescField) => string | undefined;

/**
 * A REST spelling the proto type cannot say: the JSON Schema of a field's
 * item over REST, given the schema of the proto's item (payment methods may
 * be {"type": name} as well as name; src/protocols/rest).
 */
export type RestSpelling = (item: JsonSchema) => JsonSchema;

export interface ProtoSchemasOptions {
  rules: RuleReader;
  describe: Describe;
  /** REST spellings by full field name ("payments.v2.CreatePaymentIntentRequest.payment_method"). */
  spellings?: ReadonlyMap<string, RestSpelling>;
}

/** ProtoSchemas turns messages into the JSON Schemas of their REST JSON, collecting named ones as components. */
export interface ProtoSchemas {
  /** A $ref to the schema of a response message (named after the message). */
  output(message: DescMessage): JsonSchema;
  /** A $ref to the schema of a request body: the message without the fields the path binds. */
  input(message: DescMessage, boundByPath: readonly string[]): JsonSchema;
  /** The schema of one request field as a query or path parameter. */
  parameter(field: DescField): JsonSchema;
  /** The schema of a name/value list as a deepObject query parameter: the names as property names, each with its value. */
  entries(field: DescField): JsonSchema;
  /** The component schemas made so far, by name. */
  readonly components: Record<string, JsonSchema>;
}

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** Well-known types as the REST encoder writes them (src/protocols/rest/encode-json.ts). */
const dateTime: JsonSchema = {
  type: "string",
  format: "date-time",
  pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$",
  description: "RFC 3339 in UTC with exactly three fractional digits, e.g. 2026-11-21T14:30:11.579Z.",
  examples: ["2026-11-21T14:30:11.579Z"],
};

/**
 * createProtoSchemas derives the REST bodies' schemas from the messages, as
 * the REST gateway reads and writes them. Every object is closed
 * (additionalProperties: false). In a response, a list, a message field and
 * a proto3 optional scalar are always present (null when unset, unless the
 * field is required); a plain scalar is left out at its zero value, so its
 * key is required exactly when its rules refuse the zero value. In a request,
 * null means "not given", and a key is required exactly when the field's
 * rules refuse it being absent. Field rules become keywords through
 * scalarSchema; shapes become named schemas; comments become descriptions.
 */
export function createProtoSchemas(options: ProtoSchemasOptions): ProtoSchemas {
  const components: Record<string, JsonSchema> = {};
  const { rules, describe } = options;

  const described = (schema: JsonSchema, text: string | undefined): JsonSchema => (text ? { ...schema, description: text } : schema);

  function component(name: string, make: () => JsonSchema): JsonSchema {
    if (!(name in components)) {
      components[name] = {};
      components[name] = make();
    }
    return ref(name);
  }

  /** Whether a value of the field must be given (request) or is always there (response plain scalars). */
  function zeroRefused(field: DescField, value: ValueRules | undefined): boolean {
    if (!value) return false;
    if (value.required) return true;
    if (value.ignoreZero) return false;
    // An absent value becomes the default.
    if (value.type?.kind !== "repeated" && value.type?.rules.default !== undefined) return false;
    return rulesRefuseZero(field, value);
  }

  /** Whether the type rules alone refuse the zero value ("", 0, no items). */
  function rulesRefuseZero(field: DescField, value: ValueRules): boolean {
    if (!value.type) return false;
    switch (value.type.kind) {
      case "string":
        return stringCheck(value.type.rules)("") !== undefined;
      case "int32":
      case "int64":
        return integerCheck(value.type.rules)(field.fieldKind === "scalar" && field.scalar === ScalarType.INT64 ? 0n : 0) !== undefined;
      case "repeated":
        return value.type.rules.minItems !== undefined && value.type.rules.minItems > 0n;
    }
  }

  /**
   * A request scalar whose zero value means "not given" (IGNORE_IF_ZERO_VALUE,
   * or a default on a field without presence) though its rules would refuse
   * it: the schema takes "" or 0 too, as the checker does.
   */
  function orZero(field: DescField, value: ValueRules | undefined, schema: JsonSchema): JsonSchema {
    if (!value || field.fieldKind !== "scalar" || !rulesRefuseZero(field, value)) return schema;
    const fallback = value.type?.kind !== "repeated" ? value.type?.rules.default : undefined;
    const implicit = field.presence !== FeatureSet_FieldPresence.EXPLICIT;
    if (!value.ignoreZero && !(implicit && fallback !== undefined)) return schema;
    return { anyOf: [schema, { const: field.scalar === ScalarType.STRING ? "" : 0 }] };
  }

  /** A scalar value's schema: a shape's named schema when it is one (strings), else inline. */
  function scalarOf(field: DescField, value: ValueRules | undefined, direction: Direction): JsonSchema {
    const scalar = field.fieldKind === "scalar" || field.fieldKind === "list" ? field.scalar : undefined;
    // A boolean has no rules but presence (livemode): it is true or false.
    if (scalar === ScalarType.BOOL) return { type: "boolean" };
    const kind = scalar === ScalarType.STRING ? "string" : scalar === ScalarType.INT32 ? "int32" : scalar === ScalarType.INT64 ? "int64" : undefined;
    if (!kind) throw new Error(`${field.parent.typeName}.${field.name}: only string, int32, int64 and bool scalars are described`);
    const schema = scalarSchema(kind, value?.type, direction);
    const named = value?.shape && kind === "string" ? component(pascal(value.shape.name), () => described(schema, describe(value.shape!))) : schema;
    // A default is the request's alone: what an absent value becomes.
    const fallback = value?.type && value.type.kind !== "repeated" ? value.type.rules.default : undefined;
    if (direction === "input" && fallback !== undefined) return { ...named, default: typeof fallback === "bigint" ? Number(fallback) : fallback };
    return named;
  }

  function messageRef(message: DescMessage, direction: Direction): JsonSchema {
    switch (message.typeName) {
      case "google.protobuf.Timestamp":
        return component("DateTime", () => dateTime);
      case "google.protobuf.Struct":
        return { type: "object", additionalProperties: true };
    }
    if (message.typeName.startsWith("google.protobuf.")) throw new Error(`${message.typeName} is not described`);
    return direction === "output" ? component(message.name, () => objectOf(message, "output", [])) : objectOf(message, "input", []);
  }

  function objectOf(message: DescMessage, direction: Direction, boundByPath: readonly string[]): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of message.fields) {
      if (boundByPath.includes(field.name)) continue;
      if (field.oneof) throw new Error(`${message.typeName}.${field.name}: oneof fields are not served over REST`);
      const value = rules.rulesOf(field);
      const { schema, always } = direction === "output" ? outputField(field, value) : inputField(field, value);
      properties[field.jsonName] = described(schema, describe(field));
      if (always) required.push(field.jsonName);
    }
    return described({ type: "object", additionalProperties: false, required, properties }, describe(message));
  }

  function listOf(field: DescField, value: ValueRules | undefined, direction: Direction): JsonSchema {
    if (field.fieldKind !== "list") throw new Error("not a list");
    const items = value?.type?.kind === "repeated" ? value.type.items : undefined;
    let item = field.listKind === "message" ? messageRef(field.message, direction) : scalarOf(field, items, direction);
    if (direction === "input") item = options.spellings?.get(`${field.parent.typeName}.${field.name}`)?.(item) ?? item;
    const schema: JsonSchema = { type: "array", items: item };
    const list = value?.type?.kind === "repeated" ? value.type.rules : undefined;
    if (list?.minItems !== undefined) schema["minItems"] = Number(list.minItems);
    if (list?.maxItems !== undefined) schema["maxItems"] = Number(list.maxItems);
    if (list?.unique) schema["uniqueItems"] = true;
    return schema;
  }

  function outputField(field: DescField, value: ValueRules | undefined): { schema: JsonSchema; always: boolean } {
    switch (field.fieldKind) {
      case "list":
        return { schema: listOf(field, value, "output"), always: true };
      case "message": {
        const schema = messageRef(field.message, "output");
        return { schema: value?.required ? schema : nullable(schema), always: true };
      }
      case "scalar": {
        const schema = scalarOf(field, value, "output");
        if (field.presence === FeatureSet_FieldPresence.EXPLICIT) return { schema: nullable(schema), always: true };
        return { schema, always: zeroRefused(field, value) };
      }
      default:
        throw new Error(`${field.parent.typeName}.${field.name}: ${field.fieldKind} fields are not served over REST`);
    }
  }

  function inputField(field: DescField, value: ValueRules | undefined): { schema: JsonSchema; always: boolean } {
    const explicit = field.fieldKind === "scalar" && field.presence === FeatureSet_FieldPresence.EXPLICIT;
    // A list must be given only when required: an absent list is an empty one, which its rules may ignore.
    const always = field.fieldKind === "list" || explicit ? (value?.required ?? false) : zeroRefused(field, value);
    let schema: JsonSchema;
    switch (field.fieldKind) {
      case "list":
        schema = listOf(field, value, "input");
        break;
      case "message":
        schema = messageRef(field.message, "input");
        break;
      case "scalar":
        schema = orZero(field, value, scalarOf(field, value, "input"));
        break;
      default:
        throw new Error(`${field.parent.typeName}.${field.name}: ${field.fieldKind} fields are not served over REST`);
    }
    // null means "not given" (src/protocols/decode-json.ts).
    return { schema: always ? schema : nullable(schema), always };
  }

  function nullable(schema: JsonSchema): JsonSchema {
    const alternatives = Array.isArray(schema["anyOf"]) && Object.keys(schema).length === 1 ? (schema["anyOf"] as JsonSchema[]) : [schema];
    return { anyOf: [...alternatives, { type: "null" }] };
  }

  return {
    components,
    output: (message) => messageRef(message, "output"),
    input: (message, boundByPath) => component(message.name, () => objectOf(message, "input", boundByPath)),
    parameter: (field) => orZero(field, rules.rulesOf(field), scalarOf(field, rules.rulesOf(field), "input")),
    entries(field) {
      if (field.fieldKind !== "list" || field.listKind !== "message") throw new Error(`${field.name} is not a list of entries`);
      const [name, value] = field.message.fields as [DescField, DescField];
      const schema: JsonSchema = {
        type: "object",
        propertyNames: scalarOf(name, rules.rulesOf(name), "input"),
        additionalProperties: scalarOf(value, rules.rulesOf(value), "input"),
      };
      const list = rules.rulesOf(field)?.type;
      if (list?.kind === "repeated" && list.rules.maxItems !== undefined) schema["maxProperties"] = Number(list.rules.maxItems);
      return schema;
    },
  };
}

/** pascal names a shape's schema: client_reference → ClientReference. */
function pascal(name: string): string {
  return name.replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
}
