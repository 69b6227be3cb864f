import type { MetaEntry as MetaEntryMessage } from "../../gen/payments/v2/payment_intent_pb.js";
import type { MetaEntry } from "../domain/meta.js";
import { invalid } from "../rules/invalid.js";

/**
 * metaEntriesOf reads a request's meta (or meta filter) after the field
 * rules ran (each name and value well-formed, the count bounded) and applies
 * the one rule a field rule cannot state: each name once, so a name reads as
 * one value and a filter as one condition per name. field is the list's JSON
 * path in the 400 message.
 */
export function metaEntriesOf(entries: readonly MetaEntryMessage[], field = "meta"): MetaEntry[] {
  const seen = new Set<string>();
  return entries.map(({ name, value }, index) => {
    if (seen.has(name)) throw invalid(`${field}[${index}].name: "${name}" is listed twice`);
    seen.add(name);
    return { name, value };
  });
}

/** metaMessages renders stored entries as the API's messages, in their order. */
export function metaMessages(entries: readonly MetaEntry[]): MetaEntryMessage[] {
  return entries.map(({ name, value }) => ({ $typeName: "payments.v2.MetaEntry", name, value }));
}
