import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** One settlement split of an intent (§2.3), at its position in the client's list. */
export const PaymentIntentSplitEntity = defineEntity({
  name: "PaymentIntentSplit",
  tableName: "payment_intent_splits",
  properties: {
    paymentIntentId: p.string().primary(),
    position: p.integer().primary(),
    merchantId: p.string(),
    settlementAccountId: p.string(),
    splitAmount: p.bigint("bigint"),
  },
});

export type PaymentIntentSplitRow = InferEntity<typeof PaymentIntentSplitEntity>;
