import type { CreatePaymentIntentRequest } from "../../gen/payments/v2/payment_intent_pb.js";
import type { SettlementSplit } from "../domain/payment-intent.js";
import { invalid } from "../rules/invalid.js";
import { checkCallbackUrl, checkClientReference, checkEmail } from "./field-rules.js";
import type { PaymentMethodCatalogue } from "./payment-method-catalogue.js";

/** Largest amount accepted: ₦10,000,000,000.00 in kobo. */
export const maxAmount = 1_000_000_000_000n;
export const maxPaymentMethods = 10;
export const maxSplits = 10;

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
}

/**
 * normalizeCreateRequest applies the §4.1 rules that need no storage, in the
 * order of the request's fields, and fills in defaults: currency NGN, receipt
 * to the customer's email (§2.1), every enabled method. Whether split accounts
 * exist is checked by the service, which can read the store.
 */
export function normalizeCreateRequest(
  request: CreatePaymentIntentRequest,
  catalogue: PaymentMethodCatalogue,
): NormalizedCreate {
  const amount = request.amount;
  if (amount < 1n || amount > maxAmount) {
    throw invalid(`amount must be an integer from 1 to ${maxAmount} (kobo)`);
  }
  if (request.customerEmail === "") throw invalid("customerEmail is required");
  checkEmail("customerEmail", request.customerEmail);
  if (request.currency !== "" && request.currency !== "NGN") {
    throw invalid("currency: only NGN is supported");
  }
  if (request.clientReference === "") throw invalid("clientReference is required");
  checkClientReference("clientReference", request.clientReference);
  if (request.receiptEmail !== "") checkEmail("receiptEmail", request.receiptEmail);

  if (request.paymentMethod.length > maxPaymentMethods) {
    throw invalid(`paymentMethod may list at most ${maxPaymentMethods} methods`);
  }
  request.paymentMethod.forEach((name, index) => {
    if (!catalogue.has(name)) {
      throw invalid(`paymentMethod[${index}]: unknown payment method "${name}"; allowed: ${catalogue.names.join(", ")}`);
    }
    if (request.paymentMethod.indexOf(name) !== index) {
      throw invalid(`paymentMethod[${index}]: "${name}" is listed twice`);
    }
  });

  const callbackUrl = request.callbackUrl === undefined ? null : checkCallbackUrl("callbackUrl", request.callbackUrl);

  if (request.settlementAccounts.length > maxSplits) {
    throw invalid(`settlementAccounts may list at most ${maxSplits} accounts`);
  }
  let splitTotal = 0n;
  const seen = new Set<string>();
  const splits = request.settlementAccounts.map((split, index) => {
    const field = `settlementAccounts[${index}]`;
    if (split.settlementAccountId === "") throw invalid(`${field}.settlementAccountId is required`);
    if (seen.has(split.settlementAccountId)) throw invalid(`${field}.settlementAccountId is listed twice`);
    seen.add(split.settlementAccountId);
    if (split.splitAmount < 1n) throw invalid(`${field}.splitAmount must be an integer of at least 1 (kobo)`);
    splitTotal += split.splitAmount;
    return { settlementAccountId: split.settlementAccountId, splitAmount: split.splitAmount };
  });
  if (splitTotal > amount) {
    throw invalid(`settlementAccounts: the splits add up to ${splitTotal}, more than amount ${amount}`);
  }

  return {
    amount,
    currency: "NGN",
    customerEmail: request.customerEmail,
    receiptEmail: request.receiptEmail === "" ? request.customerEmail : request.receiptEmail,
    clientReference: request.clientReference,
    paymentMethods: request.paymentMethod.length > 0 ? [...request.paymentMethod] : [...catalogue.names],
    callbackUrl,
    splits,
  };
}
