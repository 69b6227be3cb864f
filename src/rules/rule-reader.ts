import { getOption, hasOption, ScalarType, type DescExtension, type DescField, type DescMessage, type Registry } from "@bufbuild/protobuf";
import type { GenExtension } from "@bufbuild/protobuf/codegenv2";
import type { FieldOptions } from "@bufbuild/protobuf/wkt";
import type { FieldRules, Int32Rules, Int64Rules, RepeatedRules, StringRules } from "../../gen/payments/rules/v1/rules_pb.js";

/** Ignore.IGNORE_IF_ZERO_VALUE (a number here: the protoc plugin reads no generated code). */
const ignoreIfZeroValue = 1;

/** The type rules of a value: of a string, an integer, or a list and its items. */
export type TypeRules =
  | { kind: "string"; rules: StringRules }
  | { kind: "int32"; rules: Int32Rules }
  | { kind: "int64"; rules: Int64Rules }
  | { kind: "repeated"; rules: RepeatedRules; items: ValueRules | undefined };

/** ValueRules are the rules of one value (a field, or each item of a list), resolved through its shape. */
export interface ValueRules {
  /** The field's own rules, as declared. */
  readonly declared: FieldRules;
  /** The shape the type rules and phrase come from (a field of the package's Shapes), when they come from one. */
  readonly shape: DescField | undefined;
  /** The type rules, the field's own or its shape's. */
  readonly type: TypeRules | undefined;
  /** The phrase of the 400 message, when the proto gives one (the field's own or its shape's). */
  readonly phrase: string | undefined;
  readonly required: boolean;
  /** IGNORE_IF_ZERO_VALUE: the zero value means "not given" and passes. */
  readonly ignoreZero: boolean;
}

/** RuleReader reads the (payments.rules.v1.field) options of fields. */
export interface RuleReader {
  /** The field's rules, or undefined when it declares none. Throws when they do not fit the field (a mistake in the proto). */
  rulesOf(field: DescField): ValueRules | undefined;
}

export interface RuleReaderOptions {
  /**
   * The payments.rules.v1.field extension. The running service passes the
   * generated one; the protoc plugin, which must not read gen/ (it writes
   * it), passes the one its request's descriptors declare.
   */
  extension: DescExtension;
  /** Where shapes are found: the message Shapes of each field's package. */
  registry: Registry;
}

/**
 * createRuleReader reads field rules and resolves shapes, checking that each
 * rule fits its field (string rules on a string, a shape of the same type), so
 * a mistake in the proto stops the start, the generator and the tests.
 */
export function createRuleReader(options: RuleReaderOptions): RuleReader {
  const extension = options.extension as GenExtension<FieldOptions, FieldRules>;
  const cache = new Map<DescField, ValueRules | undefined>();

  function shapeOf(field: DescField, name: string): DescField {
    const pkg = field.parent.file.proto.package;
    const shapes: DescMessage | undefined = options.registry.getMessage(`${pkg}.Shapes`);
    const shape = shapes?.fields.find((f) => f.name === name);
    if (!shape) throw new Error(`${field.parent.typeName}.${field.name}: no shape ${pkg}.Shapes.${name}`);
    return shape;
  }

  /** The rules of one value of field: the field itself, or (items) each item of the list. */
  function resolve(field: DescField, declared: FieldRules, item: boolean): ValueRules {
    const where = `${field.parent.typeName}.${field.name}${item ? " items" : ""}`;
    let source = declared;
    let shape: DescField | undefined;
    if (declared.shape !== "") {
      if (declared.type.case !== undefined || declared.phrase !== "") throw new Error(`${where}: a shape comes with its own type rules and phrase`);
      shape = shapeOf(field, declared.shape);
      if (!hasOption(shape, extension)) throw new Error(`${where}: shape ${shape.name} declares no rules`);
      source = getOption(shape, extension);
      if (scalarOf(shape) !== scalarOf(field, item)) throw new Error(`${where}: shape ${shape.name} is of another type`);
    }
    const type = typeRules(field, source, item, where);
    return {
      declared,
      shape,
      type,
      phrase: source.phrase === "" ? undefined : source.phrase,
      required: declared.required,
      ignoreZero: declared.ignore === ignoreIfZeroValue,
    };
  }

  function typeRules(field: DescField, rules: FieldRules, item: boolean, where: string): TypeRules | undefined {
    const scalar = scalarOf(field, item);
    switch (rules.type.case) {
      case undefined:
        return undefined;
      case "string":
        if (scalar !== ScalarType.STRING) throw new Error(`${where}: string rules on a field that is not a string`);
        return { kind: "string", rules: rules.type.value };
      case "int32":
        if (scalar !== ScalarType.INT32) throw new Error(`${where}: int32 rules on a field that is not an int32`);
        return { kind: "int32", rules: rules.type.value };
      case "int64":
        if (scalar !== ScalarType.INT64) throw new Error(`${where}: int64 rules on a field that is not an int64`);
        return { kind: "int64", rules: rules.type.value };
      case "repeated": {
        if (field.fieldKind !== "list" || item) throw new Error(`${where}: repeated rules on a field that is not a list`);
        const items = rules.type.value.items;
        return { kind: "repeated", rules: rules.type.value, items: items ? resolve(field, items, true) : undefined };
      }
    }
  }

  return {
    rulesOf(field) {
      if (!cache.has(field)) cache.set(field, hasOption(field, extension) ? resolve(field, getOption(field, extension), false) : undefined);
      return cache.get(field);
    },
  };
}

/** The scalar type of a field, or of each item of a list; undefined for messages, enums and maps. */
function scalarOf(field: DescField, item = false): ScalarType | undefined {
  if (field.fieldKind === "scalar") return field.scalar;
  if (item && field.fieldKind === "list" && field.listKind === "scalar") return field.scalar;
  return undefined;
}
