import type { SettlementAccountRecord } from "../../domain/settlement-account.js";
import type { SettlementAccountStore } from "../settlement-account-store.js";
import { compareNewestFirst } from "./compare-newest-first.js";

/** createMemorySettlementAccountStore keeps settlement accounts in process memory. */
export function createMemorySettlementAccountStore(): SettlementAccountStore {
  const byId = new Map<string, SettlementAccountRecord>();
  const ofMerchant = (merchantId: string) => [...byId.values()].filter((row) => row.merchantId === merchantId);

  return {
    async insert(record) {
      const existing = ofMerchant(record.merchantId).find(
        (row) => row.bankCode === record.bankCode && row.accountNumber === record.accountNumber,
      );
      if (existing) return { inserted: false, existing: copy(existing) };
      byId.set(record.id, copy(record));
      return { inserted: true, record: copy(record) };
    },

    async listByMerchant(merchantId) {
      return ofMerchant(merchantId).sort(compareNewestFirst).map(copy);
    },

    async findByIds(merchantId, ids) {
      return [...new Set(ids)]
        .map((id) => byId.get(id))
        .filter((row): row is SettlementAccountRecord => row !== undefined && row.merchantId === merchantId)
        .map(copy);
    },

    async findEarliest(merchantId) {
      const rows = ofMerchant(merchantId).sort(compareNewestFirst);
      const earliest = rows[rows.length - 1];
      return earliest && copy(earliest);
    },
  };
}

function copy(record: SettlementAccountRecord): SettlementAccountRecord {
  return { ...record, createdAt: new Date(record.createdAt), updatedAt: new Date(record.updatedAt) };
}
