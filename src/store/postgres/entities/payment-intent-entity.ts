import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * A payment intent. Its payment methods and splits live in their own tables;
 * the foreign keys, checks and indexes are in the migrations, which are the
 * schema's source of truth.
 */
export const PaymentIntentEntity = defineEntity({
  name: "PaymentIntent",
  tableName: "payment_intents",
  properties: {
    id: p.string().primary(),
    merchantId: p.string(),
    amount: p.bigint("bigint"),
    totalAmount: p.bigint("bigint"),
    currency: p.string(),
    country: p.string(),
    customerEmail: p.string(),
    receiptEmail: p.string(),
    status: p.string(),
    clientReference: p.string(),
    callbackUrl: p.string().nullable(),
    transaction: p.string().nullable(),
    checkoutToken: p.string(),
    requestFingerprint: p.string(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    expiresAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});

export type PaymentIntentRow = InferEntity<typeof PaymentIntentEntity>;
