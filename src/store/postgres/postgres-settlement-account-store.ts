import { UniqueConstraintViolationException } from "@mikro-orm/core";
// Type only: the SQL entity manager's query builder. The driver itself is
// loaded in create-orm.ts alone.
import type { EntityManager } from "@mikro-orm/postgresql";
import type { SettlementAccountRecord } from "../../domain/settlement-account.js";
import type { SettlementAccountStore } from "../settlement-account-store.js";
import { withDatabaseErrors } from "./database-errors.js";
import { SettlementAccountEntity, type SettlementAccountRow } from "./entities/settlement-account-entity.js";

const accountConstraint = "settlement_accounts_merchant_bank_account_key";

function toRecord(row: SettlementAccountRow): SettlementAccountRecord {
  return {
    id: row.id,
    merchantId: row.merchantId,
    accountName: row.accountName,
    accountNumber: row.accountNumber,
    bankName: row.bankName,
    bankCode: row.bankCode,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  };
}

/** createPostgresSettlementAccountStore keeps settlement accounts in PostgreSQL. */
export function createPostgresSettlementAccountStore(root: EntityManager): SettlementAccountStore {
  const fork = () => root.fork({ clear: true });
  const newestFirst = [{ createdAt: "desc" }, { id: "desc" }] as const;

  return {
    insert: (record) =>
      withDatabaseErrors(async () => {
        try {
          await fork().insert(SettlementAccountEntity, { ...record });
          return { inserted: true as const, record: { ...record } };
        } catch (error) {
          if (!(error instanceof UniqueConstraintViolationException) || !String(error.message).includes(accountConstraint)) {
            throw error;
          }
          const existing = await fork().findOne(SettlementAccountEntity, {
            merchantId: record.merchantId,
            bankCode: record.bankCode,
            accountNumber: record.accountNumber,
          });
          if (!existing) throw error;
          return { inserted: false as const, existing: toRecord(existing) };
        }
      }),

    listByMerchant: (merchantId) =>
      withDatabaseErrors(async () =>
        (await fork().find(SettlementAccountEntity, { merchantId }, { orderBy: [...newestFirst] })).map(toRecord),
      ),

    findByIds: (merchantId, ids) =>
      withDatabaseErrors(async () => {
        if (ids.length === 0) return [];
        return (await fork().find(SettlementAccountEntity, { merchantId, id: { $in: [...ids] } })).map(toRecord);
      }),

    findEarliest: (merchantId) =>
      withDatabaseErrors(async () => {
        const row = await fork().findOne(SettlementAccountEntity, { merchantId }, { orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
        return row ? toRecord(row) : undefined;
      }),
  };
}
