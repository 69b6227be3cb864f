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
  /** The merchant's accounts of the mode, oldest first by (createdAt, id). */
  ofMerchant(merchantId: string, livemode: boolean): readonly SettlementAccountRecord[];
  /** How many accounts the merchant has, in both modes (the cap counts them all). */
  countOfMerchant(merchantId: string): number;
  /** The merchant's account of the mode with this bank code and account number. */
  findByBankAccount(merchantId: string, livemode: boolean, bankCode: string, accountNumber: string): SettlementAccountRecord | undefined;
  add(record: SettlementAccountRecord): void;
}

const none: readonly SettlementAccountRecord[] = [];

export function createMemoryAccountTable(): MemoryAccountTable {
  const byId = new Map<string, SettlementAccountRecord>();
  const byMerchant = new Map<string, SettlementAccountRecord[]>();
  const byBankAccount = new Map<string, SettlementAccountRecord>();
  const bankKey = (merchantId: string, livemode: boolean, bankCode: string, accountNumber: string) =>
    `${merchantId}\u0000${livemode}\u0000${bankCode}\u0000${accountNumber}`;
  const modeKey = (merchantId: string, livemode: boolean) => `${merchantId}\u0000${livemode}`;
  return {
    find(merchantId, id) {
      const found = byId.get(id);
      return found && found.merchantId === merchantId ? found : undefined;
    },
    ofMerchant: (merchantId, livemode) => byMerchant.get(modeKey(merchantId, livemode)) ?? none,
    countOfMerchant: (merchantId) => (byMerchant.get(modeKey(merchantId, false))?.length ?? 0) + (byMerchant.get(modeKey(merchantId, true))?.length ?? 0),
    findByBankAccount: (merchantId, livemode, bankCode, accountNumber) => byBankAccount.get(bankKey(merchantId, livemode, bankCode, accountNumber)),
    add(record) {
      byId.set(record.id, record);
      byBankAccount.set(bankKey(record.merchantId, record.livemode, record.bankCode, record.accountNumber), record);
      const key = modeKey(record.merchantId, record.livemode);
      let accounts = byMerchant.get(key);
      if (!accounts) byMerchant.set(key, (accounts = []));
      insertInCreationOrder(accounts, record, (account) => account);
    },
  };
}

/** copyAccount is what a reader returns: a record the caller may change freely. */
export function copyAccount(record: SettlementAccountRecord): SettlementAccountRecord {
  return { ...record, createdAt: new Date(record.createdAt), updatedAt: new Date(record.updatedAt) };
}
