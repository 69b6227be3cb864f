import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  PaymentIntentListItemSchema,
  PaymentIntentSchema,
  type PaymentIntent,
  type PaymentIntentListItem,
} from "../../gen/payments/v2/payment_intent_pb.js";
import { SettlementAccountSchema, type SettlementAccount } from "../../gen/payments/v2/settlement_account_pb.js";
import type { SettlementAccountRecord } from "../domain/settlement-account.js";
import type { PaymentIntentListItemView, PaymentIntentView } from "../service/payment-intent-view.js";

/** settlementAccountToProto renders §2.4 without the owning merchant. */
export function settlementAccountToProto(account: SettlementAccountRecord): SettlementAccount {
  return create(SettlementAccountSchema, {
    id: account.id,
    accountName: account.accountName,
    accountNumber: account.accountNumber,
    bankName: account.bankName,
    bankCode: account.bankCode,
    createdAt: timestampFromDate(account.createdAt),
    updatedAt: timestampFromDate(account.updatedAt),
  });
}

function commonFields(view: PaymentIntentView | PaymentIntentListItemView) {
  return {
    id: view.id,
    amount: view.amount,
    totalAmount: view.totalAmount,
    currency: view.currency,
    receiptEmail: view.receiptEmail,
    customerEmail: view.customerEmail,
    country: view.country,
    status: view.status,
    checkoutLink: view.checkoutLink,
    clientReference: view.clientReference,
    paymentMethods: view.paymentMethods,
    callbackUrl: view.callbackUrl ?? undefined,
    transaction: view.transaction ?? undefined,
    meta: [],
    createdAt: timestampFromDate(view.createdAt),
    updatedAt: timestampFromDate(view.updatedAt),
  };
}

/** paymentIntentToProto renders the create response (§2.1). */
export function paymentIntentToProto(view: PaymentIntentView): PaymentIntent {
  return create(PaymentIntentSchema, { ...commonFields(view), settlementAccounts: view.settlementAccounts });
}

/** paymentIntentListItemToProto renders a list item (§4.2, §2.4). */
export function paymentIntentListItemToProto(view: PaymentIntentListItemView): PaymentIntentListItem {
  return create(PaymentIntentListItemSchema, {
    ...commonFields(view),
    settlementAccount: view.settlementAccount ? settlementAccountToProto(view.settlementAccount) : undefined,
  });
}
