import { ScalarType, type DescField } from "@bufbuild/protobuf";

/**
 * isEntryList tells whether a request field is a list of name/value entries
 * (a message of exactly two strings, name and value, as MetaEntry is): the
 * REST query spells such a list `field[name]=value`, one parameter per
 * entry, as grpc-gateway spells a map and OpenAPI a deepObject parameter.
 */
export function isEntryList(field: DescField): field is Extract<DescField, { fieldKind: "list"; listKind: "message" }> {
  if (field.fieldKind !== "list" || field.listKind !== "message") return false;
  const fields = field.message.fields;
  return (
    fields.length === 2 &&
    fields.every((f) => f.fieldKind === "scalar" && f.scalar === ScalarType.STRING && !f.oneof) &&
    fields[0]!.name === "name" &&
    fields[1]!.name === "value"
  );
}
