import type { PaymentIntentRecord, PaymentIntentStatus, SettlementSplit } from "../domain/payment-intent.js";
import type { SettlementAccountRecord } from "../domain/settlement-account.js";
import type { PaymentMethodCatalogue, PaymentMethodView } from "./payment-method-catalogue.js";

/** PaymentIntentView is the create response of §2.1, in domain types. */
export interface PaymentIntentView {
  id: string;
  amount: bigint;
  totalAmount: bigint;
  currency: string;
  receiptEmail: string;
  customerEmail: string;
  country: string;
  status: PaymentIntentStatus;
  checkoutLink: string;
  clientReference: string;
  paymentMethods: PaymentMethodView[];
  callbackUrl: string | null;
  transaction: string | null;
  /** Nothing fills meta yet; it is always an empty list. */
  meta: Record<string, never>[];
  settlementAccounts: SettlementSplit[];
  createdAt: Date;
  updatedAt: Date;
}

/** PaymentIntentListItemView is a list item (§4.2): no splits, one settlement account. */
export interface PaymentIntentListItemView extends Omit<PaymentIntentView, "settlementAccounts"> {
  settlementAccount: SettlementAccountRecord | null;
}

/** PaymentIntentPresenter renders stored records as API views. */
export interface PaymentIntentPresenter {
  toView(record: PaymentIntentRecord): PaymentIntentView;
  toListItem(record: PaymentIntentRecord, account: SettlementAccountRecord | null): PaymentIntentListItemView;
}

/**
 * createPaymentIntentPresenter builds views; checkoutLink is derived from
 * publicUrl at read time, so moving the service to a new address moves every
 * link with it.
 */
export function createPaymentIntentPresenter(deps: {
  publicUrl: string;
  catalogue: PaymentMethodCatalogue;
}): PaymentIntentPresenter {
  const base = deps.publicUrl.replace(/\/+$/, "");
  const toView = (record: PaymentIntentRecord): PaymentIntentView => ({
    id: record.id,
    amount: record.amount,
    totalAmount: record.totalAmount,
    currency: record.currency,
    receiptEmail: record.receiptEmail,
    customerEmail: record.customerEmail,
    country: record.country,
    status: record.status,
    checkoutLink: `${base}/checkout/${record.checkoutToken}`,
    clientReference: record.clientReference,
    paymentMethods: record.paymentMethods.map((name) => deps.catalogue.describe(name)),
    callbackUrl: record.callbackUrl,
    transaction: record.transaction,
    meta: [],
    settlementAccounts: record.splits.map((split) => ({ ...split })),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  });
  return {
    toView,
    toListItem(record, account) {
      const { settlementAccounts: _splits, ...rest } = toView(record);
      return { ...rest, settlementAccount: account };
    },
  };
}
