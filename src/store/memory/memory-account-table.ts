import type { SettlementAccountRecord } from "../../domain/settlement-account.js";
import { insertInCreationOrder } from "./creation-order.js";

/**
 * MemoryAccountTable is the in-memory settlement accounts, shared by the
 * account store (which writes them) and the intent store (which shows each
 * list item's account, as PostgreSQL joins it in the list query). Records are
 * stored as given and never handed out: readers copy what they return.
 */
export interface MemoryAccountTable {
  /** The merchant's account with this id. */
  find(merchantId: string, id: string): SettlementAccountRecord | undefined;
  /** The merchant's accounts, oldest first by (createdAt, id). */
  ofMerchant(merchantId: string): readonly SettlementAccountRecord[];
  /** The merchant's account with this bank code and account number. */
  findByBankAccount(merchantId: string, bankCode: string, accountNumber: string): SettlementAccountRecord | undefined;
  add(record: SettlementAccountRecord): void;
}

const none: readonly SettlementAccountRecord[] = [];

export function createMemoryAccountTable(): MemoryAccountTable {
  const byId = new Map<string, SettlementAccountRecord>();
  const byMerchant = new Map<string, SettlementAccountRecord[]>();
  const byBankAccount = new Map<string, SettlementAccountRecord>();
  const bankKey = (merchantId: string, bankCode: string, accountNumber: string) => `${merchantId}\u0000${bankCode}\u0000${accountNumber}`;
  return {
    find(merchantId, id) {
      const found = byId.get(id);
      return found && found.merchantId === merchantId ? found : undefined;
    },
    ofMerchant: (merchantId) => byMerchant.get(merchantId) ?? none,
    findByBankAccount: (merchantId, bankCode, accountNumber) => byBankAccount.get(bankKey(merchantId, bankCode, accountNumber)),
    add(record) {
      byId.set(record.id, record);
      byBankAccount.set(bankKey(record.merchantId, record.bankCode, record.accountNumber), record);
      let accounts = byMerchant.get(record.merchantId);
      if (!accounts) byMerchant.set(record.merchantId, (accounts = []));
      insertInCreationOrder(accounts, record, (account) => account);
    },
  };
}

/** copyAccount is what a reader returns: a record the caller may change freely. */
export function copyAccount(record: SettlementAccountRecord): SettlementAccountRecord {
  return { ...record, createdAt: new Date(record.createdAt), updatedAt: new Date(record.updatedAt) };
}
