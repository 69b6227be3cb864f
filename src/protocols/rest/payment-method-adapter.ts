import { invalid } from "../../rules/invalid.js";
import type { RestSpelling } from "../../openapi/proto-schemas.js";
import type { FieldAdapter } from "../decode-json.js";

const field = "payments.v2.CreatePaymentIntentRequest.payment_method";

/**
 * The contract shows paymentMethod items as objects (§2.5); the proto carries
 * names. Over REST an item may be "card" or {"type": "card"}: both mean card.
 * An empty list is refused rather than read as "omitted".
 */
export const paymentMethodAdapter: [string, FieldAdapter] = [
  field,
  (value, path) => {
    if (!Array.isArray(value)) return value;
    // proto3 cannot tell [] from omitted (the field's rule ignores an empty
    // list); REST can, and [] would read as "no method at all".
    if (value.length === 0) throw invalid(`${path} must not be empty; omit it to allow every enabled method`);
    return value.map((item, index) => {
      if (typeof item !== "object" || item === null || Array.isArray(item)) return item;
      const keys = Object.keys(item);
      const unknown = keys.find((key) => key !== "type");
      if (unknown !== undefined) throw invalid(`unknown field ${path}[${index}].${unknown}`);
      const type = (item as { type?: unknown }).type;
      if (typeof type !== "string") throw invalid(`${path}[${index}].type must be a string`);
      return type;
    });
  },
];

/** The same spelling in the OpenAPI document: an item is a name, or an object whose only key, type, is one. */
export const paymentMethodSpelling: [string, RestSpelling] = [
  field,
  (item) => ({ oneOf: [item, { type: "object", additionalProperties: false, required: ["type"], properties: { type: item } }] }),
];
