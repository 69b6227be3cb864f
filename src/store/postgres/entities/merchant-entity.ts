import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** A merchant: the tenant every other row belongs to. */
export const MerchantEntity = defineEntity({
  name: "Merchant",
  tableName: "merchants",
  properties: {
    id: p.string().primary(),
    name: p.string(),
    createdAt: p.datetime(),
  },
});

export type MerchantRow = InferEntity<typeof MerchantEntity>;
