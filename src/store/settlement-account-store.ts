import type { SettlementAccountRecord } from "../domain/settlement-account.js";

/** AccountInsertResult says whether the account was written or already registered. */
export type AccountInsertResult =
  | { inserted: true; record: SettlementAccountRecord }
  | { inserted: false; existing: SettlementAccountRecord };

/**
 * SettlementAccountStore is the port to settlement-account storage, scoped to
 * one merchant per call. A merchant registers one bank account (bankCode,
 * accountNumber) once.
 */
export interface SettlementAccountStore {
  insert(record: SettlementAccountRecord): Promise<AccountInsertResult>;
  /** Every account of the merchant, newest first. */
  listByMerchant(merchantId: string): Promise<SettlementAccountRecord[]>;
  /** The merchant's accounts among ids; unknown or foreign ids are left out. */
  findByIds(merchantId: string, ids: readonly string[]): Promise<SettlementAccountRecord[]>;
  /** The merchant's first registered account. */
  findEarliest(merchantId: string): Promise<SettlementAccountRecord | undefined>;
}
