import { invalid } from "../../service/field-rules.js";
import type { FieldAdapter } from "./decode-json.js";

/**
 * The contract shows paymentMethod items as objects (§2.5); the proto carries
 * names. Over REST an item may be "card" or {"type": "card"}: both mean card.
 */
export const paymentMethodAdapter: [string, FieldAdapter] = [
  "payments.v2.CreatePaymentIntentRequest.payment_method",
  (value, path) => {
    if (!Array.isArray(value)) return value;
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
