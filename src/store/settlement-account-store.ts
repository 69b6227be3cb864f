import type { SettlementAccountRecord } from "../domain/settlement-account.js";
import type { ListCursor } from "./payment-intent-store.js";

/**
 * AccountInsertResult says whether the account was written, was already
 * registered (same bankCode and accountNumber), or would exceed the
 * merchant's limit of accounts.
 */
export type AccountInsertResult =
  | { inserted: true; record: SettlementAccountRecord }
  | { inserted: false; existing: SettlementAccountRecord }
  | { inserted: false; full: true };

/** AccountListQuery selects one page of a merchant's accounts, newest first. */
export interface AccountListQuery {
  merchantId: string;
  /** Only accounts of this mode (issue 23, §1). */
  livemode: boolean;
  limit: number;
  /** The last account of the previous page. */
  after?: ListCursor;
}

/** The limits an insert is held to. */
export interface AccountInsertLimits {
  /** Most accounts one merchant may have; the insert that would pass it is refused. */
  maxPerMerchant: number;
}

/**
 * SettlementAccountStore is the port to settlement-account storage, scoped to
 * one merchant per call. A merchant registers one bank account (bankCode,
 * accountNumber) once in each mode.
 */
export interface SettlementAccountStore {
  /**
   * Writes the account unless the merchant already has it or already has
   * limits.maxPerMerchant accounts. Atomic: concurrent inserts for one
   * merchant can neither register one account twice nor pass the limit.
   */
  insert(record: SettlementAccountRecord, limits: AccountInsertLimits): Promise<AccountInsertResult>;
  /** A page of the merchant's accounts, newest first (createdAt desc, then id desc), after the cursor. */
  listByMerchant(query: AccountListQuery): Promise<SettlementAccountRecord[]>;
  /** The merchant's accounts among ids; unknown or foreign ids are left out. */
  findByIds(merchantId: string, ids: readonly string[]): Promise<SettlementAccountRecord[]>;
  /** The merchant's first registered account of the mode. */
  findEarliest(merchantId: string, livemode: boolean): Promise<SettlementAccountRecord | undefined>;
}
