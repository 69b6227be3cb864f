import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** One allowed payment method of an intent, at its position in the client's list. */
export const PaymentIntentMethodEntity = defineEntity({
  name: "PaymentIntentMethod",
  tableName: "payment_intent_methods",
  properties: {
    paymentIntentId: p.string().primary(),
    position: p.integer().primary(),
    method: p.string(),
  },
});

export type PaymentIntentMethodRow = InferEntity<typeof PaymentIntentMethodEntity>;
