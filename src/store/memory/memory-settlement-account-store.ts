import type { SettlementAccountStore } from "../settlement-account-store.js";
import { checkStorableText, isStorableText } from "../storable-text.js";
import { firstNotBefore } from "./creation-order.js";
import { copyAccount, createMemoryAccountTable, type MemoryAccountTable } from "./memory-account-table.js";

/**
 * createMemorySettlementAccountStore keeps settlement accounts in process
 * memory, in table (shared with the intent store by createMemoryStores).
 * Every check and write of an insert happens in one synchronous step, so
 * concurrent inserts can neither register an account twice nor pass the limit.
 */
export function createMemorySettlementAccountStore(table: MemoryAccountTable = createMemoryAccountTable()): SettlementAccountStore {
  return {
    async insert(record, limits) {
      checkStorableText([record.id, record.merchantId, record.accountName, record.accountNumber, record.bankName, record.bankCode]);
      const existing = table.findByBankAccount(record.merchantId, record.livemode, record.bankCode, record.accountNumber);
      if (existing) return { inserted: false, existing: copyAccount(existing) };
      if (table.countOfMerchant(record.merchantId) >= limits.maxPerMerchant) return { inserted: false, full: true };
      table.add(copyAccount(record));
      return { inserted: true, record: copyAccount(record) };
    },

    async listByMerchant(query) {
      if (query.after && !isStorableText(query.after.id)) return [];
      const accounts = table.ofMerchant(query.merchantId, query.livemode);
      const start = query.after ? firstNotBefore(accounts, (a) => a, query.after) : accounts.length;
      const page = [];
      for (let i = start - 1; i >= 0 && page.length < query.limit; i--) page.push(copyAccount(accounts[i]!));
      return page;
    },

    async findByIds(merchantId, ids) {
      const found = [];
      for (const id of new Set(ids)) {
        const account = table.find(merchantId, id);
        if (account) found.push(copyAccount(account));
      }
      return found;
    },

    async findEarliest(merchantId, livemode) {
      const earliest = table.ofMerchant(merchantId, livemode)[0];
      return earliest && copyAccount(earliest);
    },
  };
}
