import type { PaymentIntent, PaymentIntentListItem, PaymentMethod } from "../../gen/payments/v2/payment_intent_pb.js";
import type { SettlementAccount } from "../../gen/payments/v2/settlement_account_pb.js";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { SettlementAccountRecord } from "../domain/settlement-account.js";
import { metaMessages } from "./meta-entries.js";
import { isLapsed } from "./payment-expiry.js";
import type { PaymentMethodCatalogue } from "./payment-method-catalogue.js";

/**
 * PaymentIntentPresenter renders stored records as the API's messages: the
 * one conversion a response goes through. Every protocol encodes these
 * messages directly (REST JSON, proto3 JSON, binary protobuf).
 */
export interface PaymentIntentPresenter {
  /** The create response (§2.1). */
  toMessage(record: PaymentIntentRecord, now: Date): PaymentIntent;
  /** A list item or GET response (§4.2): no splits, one settlement account (§2.4). */
  toListItem(record: PaymentIntentRecord, account: SettlementAccountRecord | null, now: Date): PaymentIntentListItem;
}

/** timestamp renders a time as google.protobuf.Timestamp without a descriptor walk. */
export function timestamp(date: Date): Timestamp {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { $typeName: "google.protobuf.Timestamp", seconds: BigInt(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

/** settlementAccountMessage renders §2.4 without the owning merchant. */
export function settlementAccountMessage(account: SettlementAccountRecord): SettlementAccount {
  return {
    $typeName: "payments.v2.SettlementAccount",
    id: account.id,
    accountName: account.accountName,
    accountNumber: account.accountNumber,
    bankName: account.bankName,
    bankCode: account.bankCode,
    createdAt: timestamp(account.createdAt),
    updatedAt: timestamp(account.updatedAt),
    livemode: account.livemode,
  };
}

/**
 * createPaymentIntentPresenter builds messages; checkoutLink is derived from
 * publicUrl at read time, so moving the service to a new address moves every
 * link with it. A pending intent past its deadline is shown as expired (with
 * its deadline as updatedAt) before the sweep has stored it so: a read never
 * shows an intent as payable when it is not.
 */
export function createPaymentIntentPresenter(deps: { publicUrl: string; catalogue: PaymentMethodCatalogue }): PaymentIntentPresenter {
  const checkoutBase = `${deps.publicUrl.replace(/\/+$/, "")}/checkout/`;
  // Method messages are the same for every intent: built once per name, shared read-only.
  const methods = new Map<string, PaymentMethod>();
  const methodOf = (name: string): PaymentMethod => {
    let method = methods.get(name);
    if (!method) {
      const view = deps.catalogue.describe(name);
      method = {
        $typeName: "payments.v2.PaymentMethod",
        id: view.id,
        type: view.type,
        attributes: view.attributes.map((a) => ({ $typeName: "payments.v2.PaymentMethodAttribute", name: a.name })),
      };
      methods.set(name, method);
    }
    return method;
  };

  function common(record: PaymentIntentRecord, now: Date) {
    const lapsed = isLapsed(record, now);
    return {
      id: record.id,
      amount: record.amount,
      totalAmount: record.totalAmount,
      currency: record.currency,
      receiptEmail: record.receiptEmail,
      customerEmail: record.customerEmail,
      country: record.country,
      status: lapsed ? "expired" : record.status,
      checkoutLink: checkoutBase + record.checkoutToken,
      clientReference: record.clientReference,
      paymentMethods: record.paymentMethods.map(methodOf),
      callbackUrl: record.callbackUrl ?? undefined,
      transaction: record.transaction ?? undefined,
      meta: metaMessages(record.meta),
      createdAt: timestamp(record.createdAt),
      updatedAt: timestamp(lapsed ? record.expiresAt : record.updatedAt),
      amountRefunded: record.amountRefunded,
      livemode: record.livemode,
      nextAction: record.nextActionUrl === null ? undefined : { $typeName: "payments.v2.NextAction" as const, type: "redirect", url: record.nextActionUrl },
    };
  }

  return {
    toMessage(record, now) {
      return {
        $typeName: "payments.v2.PaymentIntent",
        ...common(record, now),
        settlementAccounts: record.splits.map((split) => ({
          $typeName: "payments.v2.SettlementSplit",
          settlementAccountId: split.settlementAccountId,
          splitAmount: split.splitAmount,
        })),
      };
    },
    toListItem(record, account, now) {
      return {
        $typeName: "payments.v2.PaymentIntentListItem",
        ...common(record, now),
        settlementAccount: account ? settlementAccountMessage(account) : undefined,
      };
    },
  };
}
