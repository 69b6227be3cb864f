import type { AccountInsertResult, SettlementAccountStore } from "../settlement-account-store.js";
import { checkStorableText, isStorableText } from "../storable-text.js";
import type { Database } from "./database.js";
import { accountColumns, readAccount } from "./account-rows.js";
import { textArrayParam, timestampParam } from "./sql-values.js";

/**
 * The first key of the advisory lock that serializes account registrations of
 * one merchant (the second is the merchant id's hash). An arbitrary constant
 * of this service, as the migration lock's is.
 */
const accountLockNamespace = 7_246_339;

/**
 * Registration: inside the merchant's advisory lock (taken by the statement
 * before it in the same transaction, so this statement's snapshot sees every
 * registration committed before it), insert unless the account exists or the
 * merchant is at the limit. One row: inserted?, how many accounts the merchant
 * had, then the existing account if any.
 */
const insertText = `
  with existing as (
    select ${accountColumns("a")} from settlement_accounts a
    where a.merchant_id = $2 and a.livemode = $10 and a.bank_code = $6 and a.account_number = $4
  ), counted as (
    select count(*) as n from settlement_accounts where merchant_id = $2
  ), inserted as (
    insert into settlement_accounts (id, merchant_id, account_name, account_number, bank_name, bank_code, created_at, updated_at, livemode)
    select $1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz, $10
    where not exists (select 1 from existing) and (select n from counted) < $9::int8
    returning id
  )
  select exists (select 1 from inserted), (select n from counted), e.*
  from (values (1)) as one (x) left join existing e on true`;
const lockText = `select pg_advisory_xact_lock(${accountLockNamespace}, hashtext($1))`;

const pageText = (after: boolean) => `
  select ${accountColumns("a")} from settlement_accounts a
  where a.merchant_id = $1 and a.livemode = $3 ${after ? "and (a.created_at, a.id) < ($4::timestamptz, $5)" : ""}
  order by a.created_at desc, a.id desc
  limit $2`;
const firstPageText = pageText(false);
const nextPageText = pageText(true);
const byIdsText = `select ${accountColumns("a")} from settlement_accounts a where a.merchant_id = $1 and a.id = any($2::text[])`;
const earliestText = `select ${accountColumns("a")} from settlement_accounts a where a.merchant_id = $1 and a.livemode = $2 order by a.created_at, a.id limit 1`;

/** createPostgresSettlementAccountStore keeps settlement accounts in PostgreSQL. */
export function createPostgresSettlementAccountStore(db: Database): SettlementAccountStore {
  const read = (rows: readonly (readonly (string | null)[])[]) => rows.map((row) => readAccount(row)!);

  return {
    async insert(record, limits): Promise<AccountInsertResult> {
      checkStorableText([record.id, record.merchantId, record.accountName, record.accountNumber, record.bankName, record.bankCode]);
      const [, result] = await db.run(true, [
        { text: lockText, values: [record.merchantId] },
        {
          text: insertText,
          values: [
            record.id,
            record.merchantId,
            record.accountName,
            record.accountNumber,
            record.bankName,
            record.bankCode,
            timestampParam(record.createdAt),
            timestampParam(record.updatedAt),
            String(limits.maxPerMerchant),
            String(record.livemode),
          ],
        },
      ]);
      const row = result!.rows[0]!;
      if (row[0] === "t") return { inserted: true, record: { ...record, createdAt: new Date(record.createdAt), updatedAt: new Date(record.updatedAt) } };
      const existing = readAccount(row, 2);
      return existing ? { inserted: false, existing } : { inserted: false, full: true };
    },

    async listByMerchant(query) {
      if (!isStorableText(query.merchantId) || (query.after && !isStorableText(query.after.id))) return [];
      const step = query.after
        ? { text: nextPageText, values: [query.merchantId, String(query.limit), String(query.livemode), timestampParam(query.after.createdAt), query.after.id] }
        : { text: firstPageText, values: [query.merchantId, String(query.limit), String(query.livemode)] };
      const [result] = await db.run(false, [step]);
      return read(result!.rows);
    },

    async findByIds(merchantId, ids) {
      const wanted = ids.filter(isStorableText);
      if (wanted.length === 0 || !isStorableText(merchantId)) return [];
      const [result] = await db.run(false, [{ text: byIdsText, values: [merchantId, textArrayParam(wanted)] }]);
      return read(result!.rows);
    },

    async findEarliest(merchantId, livemode) {
      if (!isStorableText(merchantId)) return undefined;
      const [result] = await db.run(false, [{ text: earliestText, values: [merchantId, String(livemode)] }]);
      return result!.rows[0] ? readAccount(result!.rows[0])! : undefined;
    },
  };
}
