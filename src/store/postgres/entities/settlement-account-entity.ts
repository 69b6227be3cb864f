import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** A merchant's payout bank account (§2.4). */
export const SettlementAccountEntity = defineEntity({
  name: "SettlementAccount",
  tableName: "settlement_accounts",
  properties: {
    id: p.string().primary(),
    merchantId: p.string(),
    accountName: p.string(),
    accountNumber: p.string(),
    bankName: p.string(),
    bankCode: p.string(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type SettlementAccountRow = InferEntity<typeof SettlementAccountEntity>;
