import { createHmac } from "node:crypto";

/** A timestamp column as epoch milliseconds (int8, text to node-postgres). */
const ms = (column: string) => `(extract(epoch from ${column}) * 1000)::int8`;

/**
 * The plain-pg reference's list page (issue 24: "a list page of 50 measured
 * the same way" as the create). Written by hand as a plain `pg` application
 * would, but in the shape of our store's list statement
 * (src/store/postgres/intent-sql.ts, listText), so the two read the same
 * rows the same way: the merchant's live intents of one mode, newest first
 * through payment_intents_merchant_created_idx, one more than the page to know
 * whether there is a next one, each with its splits and the settlement
 * account its list item shows (§2.4: the first split's account, else the
 * merchant's earliest of the mode). Parameters: $1 merchant, $2 livemode,
 * $3 limit. Timestamps are read as epoch milliseconds, as ours reads them:
 * cheaper for the database and for Node than timestamptz text parsed into a
 * Date, and a floor should take the cheaper way.
 */
export const referenceListText = `
  with earliest as materialized (
    (select id, livemode from settlement_accounts where merchant_id = $1 and not livemode order by created_at, id limit 1)
    union all
    (select id, livemode from settlement_accounts where merchant_id = $1 and livemode order by created_at, id limit 1)
  )
  select pi.id, pi.merchant_id, pi.amount, pi.total_amount, pi.customer_email, pi.receipt_email, pi.status, pi.client_reference,
    pi.payment_methods, pi.callback_url, pi.transaction, pi.checkout_token, pi.request_fingerprint,
    ${ms("pi.created_at")} as created_at, ${ms("pi.updated_at")} as updated_at, ${ms("pi.expires_at")} as expires_at, ${ms("pi.deleted_at")} as deleted_at,
    (select json_agg(json_build_array(s.settlement_account_id, s.split_amount::text) order by s.position)
       from payment_intent_splits s where s.merchant_id = pi.merchant_id and s.payment_intent_id = pi.id) as splits,
    pi.amount_refunded, pi.next_action_url, pi.meta, pi.livemode, acc.*
  from payment_intents pi
  left join lateral (
    select a.id as account_id, a.merchant_id as account_merchant_id, a.account_name, a.account_number, a.bank_name, a.bank_code,
      ${ms("a.created_at")} as account_created_at, ${ms("a.updated_at")} as account_updated_at, a.livemode as account_livemode
    from settlement_accounts a
    where a.merchant_id = pi.merchant_id and a.id = coalesce(
      (select s.settlement_account_id from payment_intent_splits s where s.merchant_id = pi.merchant_id and s.payment_intent_id = pi.id and s.position = 0),
      (select e.id from earliest e where e.livemode = pi.livemode))
  ) acc on true
  where pi.merchant_id = $1 and pi.livemode = $2 and pi.deleted_at is null
  order by pi.created_at desc, pi.id desc
  limit $3`;

/** A row of referenceListText as node-postgres returns it (bigint as text, timestamps as Date, json and jsonb parsed). */
export interface ReferenceListRow {
  id: string;
  amount: string;
  total_amount: string;
  customer_email: string;
  receipt_email: string;
  status: string;
  client_reference: string;
  payment_methods: string[];
  callback_url: string | null;
  transaction: string | null;
  checkout_token: string;
  /** Epoch milliseconds. */
  created_at: string;
  updated_at: string;
  amount_refunded: string;
  next_action_url: string | null;
  meta: unknown[];
  livemode: boolean;
  account_id: string | null;
  account_name: string | null;
  account_number: string | null;
  bank_name: string | null;
  bank_code: string | null;
  account_created_at: string | null;
  account_updated_at: string | null;
  account_livemode: boolean | null;
}

const iso = (epochMs: string) => new Date(Number(epochMs)).toISOString();

/** The two methods the bench's intents name, as our catalogue shows them. */
const methodAttributes: Record<string, { name: string }[]> = {
  card: [{ name: "Visa" }, { name: "Mastercard" }, { name: "Verve" }],
  bank_transfer: [{ name: "Virtual account" }],
};

export interface ReferenceListPageOptions {
  /** The origin checkout links start with. */
  publicUrl: string;
  /** Signs the next page's cursor, as ours does (a client cannot forge one). */
  tokenSecret: string;
  pageSize: number;
}

/**
 * renderReferenceListPage is the JSON body of a list page in our REST shape
 * (ListPaymentIntentsResponse: the items, then nextPageToken when there is a
 * next page), from up to pageSize + 1 rows.
 */
export function renderReferenceListPage(rows: readonly ReferenceListRow[], options: ReferenceListPageOptions): string {
  const page = rows.slice(0, options.pageSize);
  const items = page.map((r) => ({
    id: r.id,
    amount: r.amount,
    totalAmount: r.total_amount,
    currency: "NGN",
    receiptEmail: r.receipt_email,
    customerEmail: r.customer_email,
    country: "NG",
    status: r.status,
    checkoutLink: `${options.publicUrl}/checkout/${r.checkout_token}`,
    clientReference: r.client_reference,
    paymentMethods: r.payment_methods.map((type) => ({ id: `pm_${type}`, type, attributes: methodAttributes[type] ?? [] })),
    callbackUrl: r.callback_url,
    transaction: r.transaction,
    meta: r.meta,
    settlementAccount:
      r.account_id === null
        ? null
        : {
            id: r.account_id,
            accountName: r.account_name,
            accountNumber: r.account_number,
            bankName: r.bank_name,
            bankCode: r.bank_code,
            createdAt: iso(r.account_created_at!),
            updatedAt: iso(r.account_updated_at!),
            livemode: r.account_livemode,
          },
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    amountRefunded: r.amount_refunded,
    nextAction: r.next_action_url === null ? null : { url: r.next_action_url },
    livemode: r.livemode,
  }));
  const last = page[page.length - 1];
  const body: { paymentIntents: typeof items; nextPageToken?: string } = { paymentIntents: items };
  if (rows.length > options.pageSize && last) {
    const cursor = Buffer.from(JSON.stringify([Number(last.created_at), last.id])).toString("base64url");
    body.nextPageToken = `${cursor}.${createHmac("sha256", options.tokenSecret).update(cursor).digest("base64url")}`;
  }
  return JSON.stringify(body);
}
