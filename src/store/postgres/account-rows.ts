import type { SettlementAccountRecord } from "../../domain/settlement-account.js";
import { epochMs, parseEpochMs } from "./sql-values.js";

/** How a settlement account is read: accountColumns and readAccount go together, by position. */

/** A settlement account's columns, alias t. */
export function accountColumns(t: string): string {
  return [
    `${t}.id`,
    `${t}.merchant_id`,
    `${t}.account_name`,
    `${t}.account_number`,
    `${t}.bank_name`,
    `${t}.bank_code`,
    epochMs(`${t}.created_at`),
    epochMs(`${t}.updated_at`),
    `${t}.livemode`,
  ].join(", ");
}

/** How many columns accountColumns yields. */
export const accountColumnCount = 9;

/** Reads accountColumns starting at start; null when the account's id is null (an outer join found none). */
export function readAccount(row: readonly (string | null)[], start = 0): SettlementAccountRecord | null {
  const id = row[start];
  if (id === null || id === undefined) return null;
  return {
    id,
    merchantId: row[start + 1]!,
    accountName: row[start + 2]!,
    accountNumber: row[start + 3]!,
    bankName: row[start + 4]!,
    bankCode: row[start + 5]!,
    createdAt: parseEpochMs(row[start + 6]!),
    updatedAt: parseEpochMs(row[start + 7]!),
    livemode: row[start + 8] === "t",
  };
}
