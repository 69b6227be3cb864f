import { merchantOfCheckoutToken } from "../../lib/checkout-token.js";
import type { LateSuccessReason } from "../../domain/late-success.js";
import type { PaymentAttemptOutcome, PaymentAttemptRecord } from "../../domain/payment-attempt.js";
import type { MetaEntry } from "../../domain/meta.js";
import type { PaymentIntentRecord, PaymentIntentStatus } from "../../domain/payment-intent.js";
import type { ListQuery } from "../payment-intent-store.js";
import {
  bigintArrayParam,
  epochMs,
  nullableTimestampParam,
  parseEpochMs,
  parseNullableEpochMs,
  parsePlainTextArray,
  textArrayParam,
  timestampParam,
} from "./sql-values.js";
import { accountColumns } from "./account-rows.js";
import { eventContextColumns, eventContextJoin } from "./event-sql.js";
import type { StatementStep } from "./statement-pipeline.js";

/**
 * The SQL of the payment-intent store and the reading of its rows. Every
 * statement is a constant text (or one of a few variants built once), with
 * every value a `$n` parameter. Rows are read by position: intentColumns and
 * readIntent go together.
 */

type Row = readonly (string | null)[];

/** An intent's columns as the store reads them, alias t; the splits as one JSON array. */
export function intentColumns(t: string): string {
  return [
    `${t}.id`,
    `${t}.merchant_id`,
    `${t}.amount`,
    `${t}.total_amount`,
    `${t}.customer_email`,
    `${t}.receipt_email`,
    `${t}.status`,
    `${t}.client_reference`,
    `${t}.payment_methods`,
    `${t}.callback_url`,
    `${t}.transaction`,
    `${t}.checkout_token`,
    `${t}.request_fingerprint`,
    epochMs(`${t}.created_at`),
    epochMs(`${t}.updated_at`),
    epochMs(`${t}.expires_at`),
    epochMs(`${t}.deleted_at`),
    `(select json_agg(json_build_array(s.settlement_account_id, s.split_amount::text) order by s.position)
        from payment_intent_splits s where s.merchant_id = ${t}.merchant_id and s.payment_intent_id = ${t}.id)`,
    `${t}.amount_refunded`,
    `${t}.next_action_url`,
    `${t}.meta`,
    `${t}.livemode`,
  ].join(", ");
}

/** How many columns intentColumns yields. */
export const intentColumnCount = 22;

/** Reads intentColumns starting at start. */
export function readIntent(row: Row, start = 0): PaymentIntentRecord {
  const splits = row[start + 17];
  return {
    id: row[start]!,
    merchantId: row[start + 1]!,
    amount: BigInt(row[start + 2]!),
    totalAmount: BigInt(row[start + 3]!),
    currency: "NGN",
    country: "NG",
    customerEmail: row[start + 4]!,
    receiptEmail: row[start + 5]!,
    status: row[start + 6] as PaymentIntentStatus,
    clientReference: row[start + 7]!,
    // The check constraint keeps every method name plain (a-z 0-9 _).
    paymentMethods: parsePlainTextArray(row[start + 8]!),
    callbackUrl: row[start + 9] ?? null,
    transaction: row[start + 10] ?? null,
    splits: splits
      ? (JSON.parse(splits) as [string, string][]).map(([settlementAccountId, amount]) => ({
          settlementAccountId,
          splitAmount: BigInt(amount),
        }))
      : [],
    checkoutToken: row[start + 11]!,
    requestFingerprint: row[start + 12]!,
    createdAt: parseEpochMs(row[start + 13]!),
    updatedAt: parseEpochMs(row[start + 14]!),
    expiresAt: parseEpochMs(row[start + 15]!),
    deletedAt: parseNullableEpochMs(row[start + 16] ?? null),
    amountRefunded: BigInt(row[start + 18]!),
    nextActionUrl: row[start + 19] ?? null,
    meta: readMeta(row[start + 20]!),
    livemode: row[start + 21] === "t",
  };
}

/** readMeta reads a meta column (jsonb, an array of {name, value}) as its text. */
export function readMeta(text: string): MetaEntry[] {
  return (JSON.parse(text) as MetaEntry[]).map(({ name, value }) => ({ name, value }));
}

/** metaParam is a meta column's value: the entries as a jsonb array, in their order. */
export function metaParam(entries: readonly MetaEntry[]): string {
  return JSON.stringify(entries.map(({ name, value }) => ({ name, value })));
}

/** An attempt's columns, alias t. */
export function attemptColumnsOf(t: string): string {
  return [
    `${t}.id`,
    `${t}.payment_intent_id`,
    `${t}.merchant_id`,
    `${t}.amount`,
    `${t}.method`,
    `${t}.outcome`,
    `${t}.processor_reference`,
    `${t}.decline_reason`,
    epochMs(`${t}.created_at`),
    `${t}.processor`,
    `${t}.idempotency_key`,
    `${t}.next_action_url`,
    `${t}.late_success`,
    epochMs(`${t}.settled_at`),
  ].join(", ");
}

/** How many columns attemptColumnsOf yields. */
export const attemptColumnCount = 14;

const attemptColumns = attemptColumnsOf("payment_attempts");

export function readAttempt(row: Row, start = 0): PaymentAttemptRecord {
  return {
    id: row[start]!,
    paymentIntentId: row[start + 1]!,
    merchantId: row[start + 2]!,
    amount: BigInt(row[start + 3]!),
    method: row[start + 4]!,
    outcome: row[start + 5] as PaymentAttemptOutcome,
    processor: row[start + 9]!,
    idempotencyKey: row[start + 10]!,
    processorReference: row[start + 6] ?? null,
    nextActionUrl: row[start + 11] ?? null,
    declineReason: row[start + 7] ?? null,
    lateSuccess: (row[start + 12] ?? null) as LateSuccessReason | null,
    createdAt: parseEpochMs(row[start + 8]!),
    settledAt: parseNullableEpochMs(row[start + 13] ?? null),
  };
}

/**
 * The settlement account of intent t as a list item shows it (§2.4): its
 * first split's account, else the merchant's earliest one (the `earliest`
 * CTE, read once per statement), joined by primary key.
 */
const itemAccountJoin = `
  left join lateral (
    select ${accountColumns("a")} from settlement_accounts a
    where a.merchant_id = pi.merchant_id
      and a.id = coalesce(
        (select s.settlement_account_id from payment_intent_splits s where s.merchant_id = pi.merchant_id and s.payment_intent_id = pi.id and s.position = 0),
        (select e.id from earliest e where e.livemode = pi.livemode))
  ) acc on true`;
/** The merchant's earliest account of each mode: two index probes. */
const earliestCte = `earliest as materialized (
    (select id, livemode from settlement_accounts where merchant_id = $1 and not livemode order by created_at, id limit 1)
    union all
    (select id, livemode from settlement_accounts where merchant_id = $1 and livemode order by created_at, id limit 1)
  )`;

/**
 * The create: one statement writes the intent and its splits, or, when the
 * merchant already used the clientReference, writes nothing (ON CONFLICT DO
 * NOTHING raises no error, so an idempotent replay leaves no ERROR in the
 * server's log) and returns the stored intent. The first column says whether
 * it inserted; the rest is the existing intent, if this statement's snapshot
 * can see it (see insertIntent).
 */
/**
 * The columns a create writes with their types, in the order of
 * insertValues: one list, from which the column list, the VALUES list and
 * the typed select list are made.
 */
const insertedColumns = [
  ["id", "text"],
  ["merchant_id", "text"],
  ["amount", "int8"],
  ["total_amount", "int8"],
  ["currency", "text"],
  ["country", "text"],
  ["customer_email", "text"],
  ["receipt_email", "text"],
  ["status", "text"],
  ["client_reference", "text"],
  ["payment_methods", "text[]"],
  ["callback_url", "text"],
  ["transaction", "text"],
  ["checkout_token", "text"],
  ["request_fingerprint", "text"],
  ["created_at", "timestamptz"],
  ["updated_at", "timestamptz"],
  ["expires_at", "timestamptz"],
  ["deleted_at", "timestamptz"],
  ["meta", "jsonb"],
  ["livemode", "boolean"],
] as const;

const parameterOf = (column: (typeof insertedColumns)[number][0]) => `$${insertedColumns.findIndex(([name]) => name === column) + 1}`;

/** The columns a create writes, in the order of insertValues. */
export const insertColumns = insertedColumns.map(([name]) => name).join(", ");
const insertPlaceholders = insertedColumns.map((_, i) => `$${i + 1}`).join(", ");
/** The same values as a select list, typed (an INSERT … SELECT does not take its types from the columns as VALUES does). */
export const insertValuesTyped = insertedColumns.map(([, type], i) => `$${i + 1}::${type}`).join(", ");
/** How many parameters a create's insert takes: its columns, then the splits' accounts and amounts. */
export const insertParameterCount = insertedColumns.length + 2;
const splitAccounts = `$${insertedColumns.length + 1}`;
const splitAmounts = `$${insertedColumns.length + 2}`;
/** The parameter of the create's first split's account (null without splits). */
export const firstSplitAccount = `(${splitAccounts}::text[])[1]`;
/** The parameters of the merchant, the clientReference and the mode (a clientReference is unique within a merchant's mode). */
export const merchantParameter = parameterOf("merchant_id");
export const referenceParameter = parameterOf("client_reference");
export const livemodeParameter = parameterOf("livemode");

/**
 * The rows beside the intents in CTE `inserted`: its splits, from the
 * parameters after the columns' (account ids, amounts), and its meta entries
 * in the merchant-scoped side table the list's meta filter reads (the intent's
 * own meta column keeps their order for reads).
 */
export const insertSplitsCte = `splits as (
    insert into payment_intent_splits (payment_intent_id, position, merchant_id, settlement_account_id, split_amount)
    select i.id, s.n - 1, i.merchant_id, s.account_id, s.amount
    from inserted i cross join unnest(${splitAccounts}::text[], ${splitAmounts}::int8[]) with ordinality as s (account_id, amount, n)
  ), meta as (
    insert into payment_intent_meta (merchant_id, payment_intent_id, name, value, created_at)
    select i.merchant_id, i.id, e.name, e.value, ${parameterOf("created_at")}::timestamptz
    from inserted i cross join jsonb_to_recordset(${parameterOf("meta")}::jsonb) as e (name text, value text)
  )`;

const insertTextOf = (withEventContext: boolean) => `
  with inserted as (
    insert into payment_intents (${insertColumns})
    values (${insertPlaceholders})
    on conflict (merchant_id, livemode, client_reference) do nothing
    returning id, merchant_id
  ), ${insertSplitsCte}
  select exists (select 1 from inserted), ${intentColumns("pi")}${withEventContext ? `, ${eventContextColumns("ctx")}` : ""}
  from (values (${merchantParameter}::text, ${livemodeParameter}::boolean)) as ctx (merchant_id, livemode)
  ${withEventContext ? eventContextJoin("ctx", firstSplitAccount) : ""}
  left join payment_intents pi
    on pi.merchant_id = ${merchantParameter} and pi.livemode = ${livemodeParameter}::boolean and pi.client_reference = ${referenceParameter}`;
const insertText = insertTextOf(false);
const insertWithEventContextText = insertTextOf(true);

/**
 * insertIntent is the create. withEventContext adds, after the intent's
 * columns, what the outbox needs to record the creation (event-sql.ts): the
 * new intent itself is not visible to the statement that writes it, but the
 * caller holds it.
 */
export function insertIntent(record: PaymentIntentRecord, withEventContext = false): StatementStep {
  return { text: withEventContext ? insertWithEventContextText : insertText, values: insertValues(record) };
}

/** The values of a create (insertParameterCount): the intent's columns (insertColumns), then its splits' accounts and amounts. */
export function insertValues(record: PaymentIntentRecord): (string | null)[] {
  return [
      record.id,
      record.merchantId,
      record.amount.toString(),
      record.totalAmount.toString(),
      record.currency,
      record.country,
      record.customerEmail,
      record.receiptEmail,
      record.status,
      record.clientReference,
      textArrayParam(record.paymentMethods),
      record.callbackUrl,
      record.transaction,
      record.checkoutToken,
      record.requestFingerprint,
      timestampParam(record.createdAt),
      timestampParam(record.updatedAt),
      timestampParam(record.expiresAt),
      nullableTimestampParam(record.deletedAt),
      metaParam(record.meta),
      String(record.livemode),
      textArrayParam(record.splits.map((s) => s.settlementAccountId)),
      bigintArrayParam(record.splits.map((s) => s.splitAmount)),
  ];
}

const byIdText = `select ${intentColumns("pi")} from payment_intents pi where pi.merchant_id = $1 and pi.id = $2`;
export const findById = (merchantId: string, id: string): StatementStep => ({ text: byIdText, values: [merchantId, id] });

const byReferenceText = `select ${intentColumns("pi")} from payment_intents pi where pi.merchant_id = $1 and pi.livemode = $3 and pi.client_reference = $2`;
/** A clientReference is unique within a merchant's mode: test and live never collide. */
export const findByReference = (merchantId: string, livemode: boolean, reference: string): StatementStep => ({
  text: byReferenceText,
  values: [merchantId, reference, String(livemode)],
});

const byRoutedTokenText = `select ${intentColumns("pi")} from payment_intents pi where pi.merchant_id = $1 and pi.checkout_token = $2`;
const byLegacyTokenText = `select ${intentColumns("pi")} from payment_intents pi where pi.checkout_token = $1`;
/**
 * A token that carries its merchant is found on that merchant's shard alone;
 * a link made before tokens carried one (checkout-token.ts) is looked up by
 * the token alone, through the same (checkout_token, merchant_id) key.
 */
export function findByCheckoutToken(token: string): StatementStep {
  const merchantId = merchantOfCheckoutToken(token);
  return merchantId === undefined ? { text: byLegacyTokenText, values: [token] } : { text: byRoutedTokenText, values: [merchantId, token] };
}

const withAccountText = `
  with ${earliestCte}
  select ${intentColumns("pi")}, acc.* from payment_intents pi ${itemAccountJoin}
  where pi.merchant_id = $1 and pi.id = $2`;
export const findWithAccount = (merchantId: string, id: string): StatementStep => ({ text: withAccountText, values: [merchantId, id] });

/** The select after a `changed` CTE: the changed intents, with the outbox's context when asked. */
const selectChanged = `select ${intentColumns("changed")} from changed`;
const selectChangedWithContext = `select ${intentColumns("changed")}, ${eventContextColumns("changed")} from changed ${eventContextJoin("changed")}`;

/** The shape of a list query: which optional conditions it has, and how many meta filters. */
type ListShape = `${boolean}|${boolean}|${"none" | "equals" | "pending" | "expired"}|${number}`;
const listTexts = new Map<ListShape, string>();

/**
 * listText builds (once per shape) the keyset page query: live intents of the
 * merchant, newest first, each with its list item's account, in one
 * statement. Its conditions are fixed per shape rather than `$n is null or …`,
 * so the plan reads payment_intents_merchant_created_idx with the cursor as
 * an index condition (test/postgres/explain-list.test.ts). With meta
 * filters the page is read from payment_intent_meta instead: the first
 * filter's rows of the merchant, in the list's order, through
 * payment_intent_meta_filter_idx (created_at there is the intent's, so the
 * cursor is its index condition), each joined to its intent by primary key,
 * the other filters as EXISTS on the same table's primary key; the mode is
 * checked on the intent (payment_intent_meta has no mode column). Parameters:
 * $1 merchant, $2 limit, $3 mode, then (when present) reference, status or
 * now, each meta filter's name and value, cursor time and id.
 */
function listText(shape: ListShape): string {
  let text = listTexts.get(shape);
  if (text) return text;
  const [byReference, after, status, metaFilters] = shape.split("|") as [string, string, string, string];
  const filters = Number(metaFilters);
  const conditions = ["pi.merchant_id = $1", "pi.livemode = $3", "pi.deleted_at is null"];
  let n = 3;
  if (byReference === "true") conditions.push(`pi.client_reference = $${++n}`);
  if (status === "equals") conditions.push(`pi.status = $${++n}`);
  // A lapsed pending intent is expired to every reader (README, Checkout and the payment lifecycle).
  if (status === "pending") conditions.push(`pi.status = 'pending'`, `pi.expires_at > $${++n}`);
  if (status === "expired") conditions.push(`(pi.status = 'expired' or (pi.status = 'pending' and pi.expires_at <= $${++n}))`);
  let from = "payment_intents pi";
  let order = "pi.created_at desc, pi.id desc";
  let cursor = "(pi.created_at, pi.id)";
  if (filters > 0) {
    from = `payment_intent_meta m0 join payment_intents pi on pi.merchant_id = m0.merchant_id and pi.id = m0.payment_intent_id`;
    order = "m0.created_at desc, m0.payment_intent_id desc";
    cursor = "(m0.created_at, m0.payment_intent_id)";
    conditions.push(`m0.merchant_id = $1`, `m0.name = $${++n}`, `m0.value = $${++n}`);
    for (let i = 1; i < filters; i++) {
      conditions.push(
        `exists (select 1 from payment_intent_meta m where m.merchant_id = $1 and m.payment_intent_id = pi.id and m.name = $${++n} and m.value = $${++n})`,
      );
    }
  }
  if (after === "true") conditions.push(`${cursor} < ($${++n}::timestamptz, $${++n})`);
  text = `
    with ${earliestCte}
    select ${intentColumns("pi")}, acc.* from ${from} ${itemAccountJoin}
    where ${conditions.join(" and ")}
    order by ${order}
    limit $2`;
  listTexts.set(shape, text);
  return text;
}

export function listIntents(query: ListQuery): StatementStep {
  const status = query.status === undefined ? "none" : query.status === "pending" || query.status === "expired" ? query.status : "equals";
  const values: (string | null)[] = [query.merchantId, String(query.limit), String(query.livemode)];
  if (query.clientReference !== undefined) values.push(query.clientReference);
  if (status === "equals") values.push(query.status!);
  if (status === "pending" || status === "expired") values.push(timestampParam(query.now));
  const meta = query.meta ?? [];
  for (const entry of meta) values.push(entry.name, entry.value);
  if (query.after) values.push(timestampParam(query.after.createdAt), query.after.id);
  const text = listText(`${query.clientReference !== undefined}|${query.after !== undefined}|${status}|${meta.length}`);
  // A generic plan cannot know which filter is rare: with two, it would drive
  // the page from the first even when it matches half the merchant's intents
  // and the second one intent (docs/BENCHMARKS.md, the meta filter).
  return meta.length > 0 ? { text, values, planEach: true } : { text, values };
}

const cancelTextOf = (select: string) => `
  with changed as (
    update payment_intents set status = 'cancelled', updated_at = $3, deleted_at = $3
    where merchant_id = $1 and id = $2 and status = 'pending' and deleted_at is null
    returning *
  )
  ${select}`;
const cancelTexts = [cancelTextOf(selectChanged), cancelTextOf(selectChangedWithContext)] as const;
/** withEventContext (here and below): the outbox's context after the intent's columns (event-sql.ts). */
export const cancelIntent = (merchantId: string, id: string, at: Date, withEventContext = false): StatementStep => ({
  text: cancelTexts[withEventContext ? 1 : 0],
  values: [merchantId, id, timestampParam(at)],
});

const transitionTextOf = (select: string) => `
  with changed as (
    update payment_intents set status = $4, updated_at = $5, transaction = coalesce($6, transaction)
    where merchant_id = $1 and id = $2 and status = $3 and deleted_at is null
    returning *
  )
  ${select}`;
const transitionTexts = [transitionTextOf(selectChanged), transitionTextOf(selectChangedWithContext)] as const;
export function transitionIntent(
  merchantId: string,
  id: string,
  change: { from: PaymentIntentStatus; to: PaymentIntentStatus; at: Date; transaction?: string },
  withEventContext = false,
): StatementStep {
  return {
    text: transitionTexts[withEventContext ? 1 : 0],
    values: [merchantId, id, change.from, change.to, timestampParam(change.at), change.transaction ?? null],
  };
}

/** SKIP LOCKED: an intent being paid right now is left for the next sweep. */
const expireTextOf = (select: string) => `
  with due as (
    select merchant_id, id from payment_intents
    where status = 'pending' and deleted_at is null and expires_at <= $1
    order by expires_at
    limit $2
    for update skip locked
  ), changed as (
    update payment_intents pi set status = 'expired', updated_at = $1
    from due where pi.merchant_id = due.merchant_id and pi.id = due.id
    returning pi.*
  )
  ${select}`;
const expireTexts = [expireTextOf(selectChanged), expireTextOf(selectChangedWithContext)] as const;
export const expireDue = (at: Date, limit: number, withEventContext = false): StatementStep => ({
  text: expireTexts[withEventContext ? 1 : 0],
  values: [timestampParam(at), String(limit)],
});

/** The intent's row lock, under which a refund is reserved. */
const lockText = `select ${intentColumns("pi")} from payment_intents pi where pi.merchant_id = $1 and pi.id = $2 for update of pi`;
export const lockIntent = (merchantId: string, id: string): StatementStep => ({ text: lockText, values: [merchantId, id] });

const eventContextText = `select ${eventContextColumns("pi")} from payment_intents pi ${eventContextJoin("pi")} where pi.merchant_id = $1 and pi.id = $2`;
/** The outbox's context of one intent alone (a refund's reservation reads it under the row lock). */
export const eventContextOf = (merchantId: string, id: string): StatementStep => ({ text: eventContextText, values: [merchantId, id] });

const attemptsText = `select ${attemptColumns} from payment_attempts where merchant_id = $1 and payment_intent_id = $2 order by created_at, id`;
export const listAttempts = (merchantId: string, id: string): StatementStep => ({ text: attemptsText, values: [merchantId, id] });

/** The values of an attempt's insert, in beginAttempt's column order ($15: the reconciler's due time, for an open attempt). */
function attemptValues(attempt: PaymentAttemptRecord, checkAfter: Date | null): (string | null)[] {
  return [
    attempt.id,
    attempt.paymentIntentId,
    attempt.merchantId,
    attempt.amount.toString(),
    attempt.method,
    attempt.outcome,
    attempt.processorReference,
    attempt.declineReason,
    timestampParam(attempt.createdAt),
    attempt.processor,
    attempt.idempotencyKey,
    attempt.nextActionUrl,
    attempt.lateSuccess,
    nullableTimestampParam(attempt.settledAt),
    nullableTimestampParam(checkAfter),
  ];
}

/**
 * The first step of a payment (PaymentIntentStore.beginAttempt), one
 * statement: the intent moves from live, pending and not lapsed to
 * processing, and the attempt is inserted only if it did. Answers the
 * changed intent (with the outbox's context when asked), or no row.
 */
const beginTextOf = (select: string) => `
  with changed as (
    update payment_intents set status = 'processing', updated_at = $9::timestamptz
    where merchant_id = $3 and id = $2 and status = 'pending' and deleted_at is null and expires_at > $9::timestamptz
    returning *
  ), inserted as (
    insert into payment_attempts (id, payment_intent_id, merchant_id, amount, method, outcome, processor_reference, decline_reason, created_at,
      processor, idempotency_key, next_action_url, late_success, settled_at, check_after)
    select $1, changed.id, changed.merchant_id, $4::int8, $5, $6, $7, $8, $9::timestamptz, $10, $11, $12, $13, $14::timestamptz, $15::timestamptz from changed
  )
  ${select}`;
const beginTexts = [beginTextOf(selectChanged), beginTextOf(selectChangedWithContext)] as const;
export const beginAttempt = (attempt: PaymentAttemptRecord, checkAfter: Date, withEventContext = false): StatementStep => ({
  text: beginTexts[withEventContext ? 1 : 0],
  values: attemptValues(attempt, checkAfter),
});

/**
 * The settlement's lock and read, one statement: the attempt and its intent
 * locked, the attempt's lease token, the intent's other declined attempts,
 * and the outbox's context.
 */
const lockAttemptText = `
  select ${attemptColumnsOf("a")}, a.lease_token, ${intentColumns("pi")},
    (select count(*) from payment_attempts d where d.payment_intent_id = a.payment_intent_id and d.outcome = 'declined' and d.id <> a.id),
    ${eventContextColumns("pi")}
  from payment_attempts a
  join payment_intents pi on pi.merchant_id = a.merchant_id and pi.id = a.payment_intent_id
  ${eventContextJoin("pi")}
  where a.merchant_id = $1 and a.id = $2
  for update of a, pi`;
export const lockAttempt = (merchantId: string, attemptId: string): StatementStep => ({ text: lockAttemptText, values: [merchantId, attemptId] });

const writeAttemptText = `
  update payment_attempts set outcome = $3, processor_reference = $4, decline_reason = $5, next_action_url = $6, late_success = $7,
    settled_at = $8, check_after = $9, lease_token = null, lease_expires_at = null
  where merchant_id = $1 and id = $2`;
/** Writes a locked attempt's settlement; an open one stays due at checkAfter, and any lease is given back. */
export function writeAttempt(attempt: PaymentAttemptRecord, checkAfter: Date | null): StatementStep {
  return {
    text: writeAttemptText,
    values: [
      attempt.merchantId,
      attempt.id,
      attempt.outcome,
      attempt.processorReference,
      attempt.declineReason,
      attempt.nextActionUrl,
      attempt.lateSuccess,
      nullableTimestampParam(attempt.settledAt),
      nullableTimestampParam(checkAfter),
    ],
  };
}

const writeIntentStateText = `
  update payment_intents set status = $3, updated_at = $4, transaction = $5, next_action_url = $6 where merchant_id = $1 and id = $2`;
/** Writes a locked intent's status, transaction and next action as a settlement decided them. */
export const writeIntentState = (intent: PaymentIntentRecord): StatementStep => ({
  text: writeIntentStateText,
  values: [intent.merchantId, intent.id, intent.status, timestampParam(intent.updatedAt), intent.transaction, intent.nextActionUrl],
});

const postponeAttemptText = `
  update payment_attempts set check_after = $3, processor_reference = coalesce($4, processor_reference),
    lease_token = case when $5::text is null then lease_token end,
    lease_expires_at = case when $5::text is null then lease_expires_at end
  where merchant_id = $1 and id = $2 and outcome in ('processing', 'requires_action') and ($5::text is null or lease_token = $5)
  returning id`;
export const postponeAttempt = (
  merchantId: string,
  attemptId: string,
  postponement: { checkAfter: Date; processorReference: string | null; leaseToken?: string },
): StatementStep => ({
  text: postponeAttemptText,
  values: [merchantId, attemptId, timestampParam(postponement.checkAfter), postponement.processorReference, postponement.leaseToken ?? null],
});

/**
 * The reconciler's claim of open attempts: due, not under an unexpired
 * lease, earliest first, `for update skip locked` so instances never wait on
 * each other or take the same row, leased on the database's clock.
 */
const claimAttemptsText = `
  with due as (
    select id from payment_attempts
    where outcome in ('processing', 'requires_action') and check_after <= $1 and (lease_expires_at is null or lease_expires_at <= now())
    order by check_after
    limit $2
    for update skip locked
  )
  update payment_attempts a set lease_token = gen_random_uuid()::text, lease_expires_at = now() + $3::int8 * interval '1 millisecond'
  from due where a.id = due.id
  returning ${attemptColumnsOf("a")}, a.lease_token`;
export const claimDueAttempts = (now: Date, limit: number, leaseMs: number): StatementStep => ({
  text: claimAttemptsText,
  values: [timestampParam(now), String(limit), String(leaseMs)],
});

const alarmText = `
  with due as (
    select id from payment_attempts
    where outcome in ('processing', 'requires_action') and not alarmed and created_at < $1
    order by created_at
    limit $2
    for update skip locked
  )
  update payment_attempts a set alarmed = true from due where a.id = due.id
  returning ${attemptColumnsOf("a")}`;
/** Marks open attempts older than olderThan whose alarm was not raised yet (payment_attempts_alarm_idx). */
export const alarmOpenAttempts = (olderThan: Date, limit: number): StatementStep => ({
  text: alarmText,
  values: [timestampParam(olderThan), String(limit)],
});

const findAttemptText = `select ${attemptColumns} from payment_attempts where merchant_id = $1 and id = $2`;
export const findAttempt = (merchantId: string, attemptId: string): StatementStep => ({ text: findAttemptText, values: [merchantId, attemptId] });

const attemptForProcessorText = `select ${attemptColumns} from payment_attempts where processor = $1 and idempotency_key = $2`;
/** By processor and idempotency key alone (payment_attempts_idempotency_key): a processor's notice names no merchant. */
export const findAttemptForProcessor = (processor: string, idempotencyKey: string): StatementStep => ({
  text: attemptForProcessorText,
  values: [processor, idempotencyKey],
});
