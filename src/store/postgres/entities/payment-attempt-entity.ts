import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** One attempt to pay an intent; no card data is ever stored. */
export const PaymentAttemptEntity = defineEntity({
  name: "PaymentAttempt",
  tableName: "payment_attempts",
  properties: {
    id: p.string().primary(),
    paymentIntentId: p.string(),
    merchantId: p.string(),
    amount: p.bigint("bigint"),
    method: p.string(),
    outcome: p.string(),
    processorReference: p.string(),
    declineReason: p.string().nullable(),
    createdAt: p.datetime(),
  },
});

export type PaymentAttemptRow = InferEntity<typeof PaymentAttemptEntity>;
