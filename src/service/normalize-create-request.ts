import type { CreatePaymentIntentRequest } from "../../gen/payments/v2/payment_intent_pb.js";
import type { MetaEntry } from "../domain/meta.js";
import type { SettlementSplit } from "../domain/payment-intent.js";
import { invalid } from "../rules/invalid.js";
import { metaEntriesOf } from "./meta-entries.js";
import type { PaymentMethodCatalogue } from "./payment-method-catalogue.js";

/** NormalizedCreate is a create request that passed every rule, with defaults filled in. */
export interface NormalizedCreate {
  amount: bigint;
  currency: "NGN";
  customerEmail: string;
  receiptEmail: string;
  clientReference: string;
  paymentMethods: string[];
  callbackUrl: string | null;
  splits: SettlementSplit[];
  meta: MetaEntry[];
}

/**
 * normalizeCreateRequest applies the §4.1 rules that the proto's field rules
 * cannot state, because they need the catalogue or another field, in the
 * order of the request's fields, and fills in the defaults that depend on
 * another field: receipt to the customer's email (§2.1), every enabled
 * method (with settlement splits, every one that takes them). The field
 * rules (bounds, formats, counts, each method once) have run already, in the
 * pipeline; whether split accounts exist is checked by
 * the service, which can read the store.
 */
export function normalizeCreateRequest(
  request: CreatePaymentIntentRequest,
  catalogue: PaymentMethodCatalogue,
): NormalizedCreate {
  request.paymentMethod.forEach((name, index) => {
    if (catalogue.notConfigured(name)) {
      throw invalid(`paymentMethod[${index}]: the payment processor "${name}" is not configured on this service`);
    }
    if (!catalogue.has(name)) {
      throw invalid(`paymentMethod[${index}]: unknown payment method "${name}"; allowed: ${catalogue.names.join(", ")}`);
    }
    if (request.settlementAccounts.length > 0 && !catalogue.takesSplits(name)) {
      throw invalid(`paymentMethod[${index}]: "${name}" cannot collect an intent with settlementAccounts: its split accounts are not mapped yet`);
    }
  });

  let splitTotal = 0n;
  const seen = new Set<string>();
  const splits = request.settlementAccounts.map((split, index) => {
    if (seen.has(split.settlementAccountId)) throw invalid(`settlementAccounts[${index}].settlementAccountId is listed twice`);
    seen.add(split.settlementAccountId);
    splitTotal += split.splitAmount;
    return { settlementAccountId: split.settlementAccountId, splitAmount: split.splitAmount };
  });
  if (splitTotal > request.amount) {
    throw invalid(`settlementAccounts: the splits add up to ${splitTotal}, more than amount ${request.amount}`);
  }

  return {
    amount: request.amount,
    // The only value the field's rule accepts (its default included).
    currency: "NGN",
    customerEmail: request.customerEmail,
    receiptEmail: request.receiptEmail === "" ? request.customerEmail : request.receiptEmail,
    clientReference: request.clientReference,
    // By default every method that can collect this intent: with splits, those that take them.
    paymentMethods:
      request.paymentMethod.length > 0
        ? [...request.paymentMethod]
        : catalogue.names.filter((name) => splits.length === 0 || catalogue.takesSplits(name)),
    // The field's rule accepted it; stored in the WHATWG serialisation, as the checkout page reads it back.
    callbackUrl: request.callbackUrl === undefined ? null : new URL(request.callbackUrl).href,
    splits,
    meta: metaEntriesOf(request.meta),
  };
}
