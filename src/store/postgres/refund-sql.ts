import type { RefundReason, RefundRecord, RefundStatus } from "../../domain/refund.js";
import type { RefundKey, RefundListQuery, RefundPostponement, RefundSettlement } from "../refund-store.js";
import { eventContextColumns, eventContextJoin } from "./event-sql.js";
import { intentColumns, metaParam, readMeta } from "./intent-sql.js";
import { epochMs, nullableTimestampParam, parseEpochMs, parseNullableEpochMs, timestampParam } from "./sql-values.js";
import type { StatementStep } from "./statement-pipeline.js";

/**
 * The SQL of the refund store and the reading of its rows. Every statement
 * is a constant text with every value a `$n` parameter. Rows are read by
 * position: refundColumns and readRefund go together.
 */

type Row = readonly (string | null)[];

/** A refund's columns, alias t. */
export function refundColumns(t: string): string {
  return [
    `${t}.id`,
    `${t}.merchant_id`,
    `${t}.payment_intent_id`,
    `${t}.attempt_id`,
    `${t}.amount`,
    `${t}.status`,
    `${t}.reason`,
    `${t}.client_reference`,
    `${t}.request_fingerprint`,
    `${t}.failure_reason`,
    `${t}.processor`,
    `${t}.processor_reference`,
    epochMs(`${t}.created_at`),
    epochMs(`${t}.updated_at`),
    epochMs(`${t}.check_after`),
    `${t}.meta`,
    `${t}.livemode`,
  ].join(", ");
}

/** How many columns refundColumns yields. */
export const refundColumnCount = 17;

export function readRefund(row: Row, start = 0): RefundRecord {
  return {
    id: row[start]!,
    merchantId: row[start + 1]!,
    paymentIntentId: row[start + 2]!,
    attemptId: row[start + 3]!,
    amount: BigInt(row[start + 4]!),
    status: row[start + 5] as RefundStatus,
    reason: row[start + 6] as RefundReason,
    clientReference: row[start + 7] ?? null,
    requestFingerprint: row[start + 8] ?? null,
    failureReason: row[start + 9] ?? null,
    processor: row[start + 10]!,
    processorReference: row[start + 11] ?? null,
    createdAt: parseEpochMs(row[start + 12]!),
    updatedAt: parseEpochMs(row[start + 13]!),
    checkAfter: parseNullableEpochMs(row[start + 14] ?? null),
    meta: readMeta(row[start + 15]!),
    livemode: row[start + 16] === "t",
  };
}

const byReferenceText = `select ${refundColumns("r")} from refunds r where r.merchant_id = $1 and r.client_reference = $2`;
const automaticText = `select ${refundColumns("r")} from refunds r where r.merchant_id = $1 and r.attempt_id = $2 and r.client_reference is null`;
/** The refund stored under a reservation's key (uses refunds_client_reference_key or refunds_automatic_key). */
export function findByKey(merchantId: string, key: RefundKey): StatementStep {
  return "clientReference" in key
    ? { text: byReferenceText, values: [merchantId, key.clientReference] }
    : { text: automaticText, values: [merchantId, key.automaticFor] };
}

const byIdText = `select ${refundColumns("r")} from refunds r where r.merchant_id = $1 and r.id = $2`;
export const findById = (merchantId: string, id: string): StatementStep => ({ text: byIdText, values: [merchantId, id] });

const forProcessorText = `select ${refundColumns("r")} from refunds r where r.id = $1`;
/** By id alone (refunds_id_idx): a processor's notice names no merchant. */
export const findForProcessor = (id: string): StatementStep => ({ text: forProcessorText, values: [id] });

const insertText = `
  insert into refunds (merchant_id, id, payment_intent_id, attempt_id, amount, status, reason, client_reference, request_fingerprint,
    failure_reason, processor, processor_reference, created_at, updated_at, check_after, meta, livemode)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::jsonb, $17)`;
/** The reservation's insert: a plain one, so a key taken meanwhile (another intent's refund) fails it and rolls it back. */
export function insertRefund(refund: RefundRecord): StatementStep {
  return {
    text: insertText,
    values: [
      refund.merchantId,
      refund.id,
      refund.paymentIntentId,
      refund.attemptId,
      refund.amount.toString(),
      refund.status,
      refund.reason,
      refund.clientReference,
      refund.requestFingerprint,
      refund.failureReason,
      refund.processor,
      refund.processorReference,
      timestampParam(refund.createdAt),
      timestampParam(refund.updatedAt),
      nullableTimestampParam(refund.checkAfter),
      metaParam(refund.meta),
      String(refund.livemode),
    ],
  };
}

const addRefundedText = `update payment_intents set amount_refunded = amount_refunded + $3, updated_at = $4 where merchant_id = $1 and id = $2`;
/** Raises the locked intent's amount_refunded (its check constraint refuses more than amount). */
export const addRefunded = (merchantId: string, intentId: string, amount: bigint, at: Date): StatementStep => ({
  text: addRefundedText,
  values: [merchantId, intentId, amount.toString(), timestampParam(at)],
});

/**
 * The settlement's compare-and-set, one statement: the refund moves from
 * pending only (and, with a lease token, only while it holds that lease); a
 * failed merchant refund gives its amount back to the intent in the same
 * statement. It answers the refund and the intent after the change, with the
 * outbox's context, or no row when nothing changed.
 */
const settleText = `
  with settled as (
    update refunds set status = $3, failure_reason = $4, processor_reference = coalesce($5, processor_reference), updated_at = $6,
      check_after = null, lease_token = null, lease_expires_at = null
    where merchant_id = $1 and id = $2 and status = 'pending' and ($7::text is null or lease_token = $7)
    returning *
  ), released as (
    update payment_intents pi set amount_refunded = pi.amount_refunded - s.amount, updated_at = $6
    from settled s
    where s.status = 'failed' and s.client_reference is not null and pi.merchant_id = s.merchant_id and pi.id = s.payment_intent_id
    returning pi.*
  )
  select ${refundColumns("s")}, ${intentColumns("pi")}, ${eventContextColumns("pi")}
  from settled s
  join lateral (
    select * from released
    union all
    select * from payment_intents p where p.merchant_id = s.merchant_id and p.id = s.payment_intent_id and not exists (select 1 from released)
  ) pi on true
  ${eventContextJoin("pi")}`;
export function settleRefund(merchantId: string, id: string, settlement: RefundSettlement): StatementStep {
  return {
    text: settleText,
    values: [
      merchantId,
      id,
      settlement.status,
      settlement.status === "failed" ? (settlement.failureReason ?? "The refund failed.") : null,
      settlement.processorReference,
      timestampParam(settlement.at),
      settlement.leaseToken ?? null,
    ],
  };
}

const postponeText = `
  update refunds set check_after = $3, processor_reference = coalesce($4, processor_reference),
    lease_token = case when $5::text is null then lease_token end,
    lease_expires_at = case when $5::text is null then lease_expires_at end
  where merchant_id = $1 and id = $2 and status = 'pending' and ($5::text is null or lease_token = $5)
  returning id`;
/** Keeps a pending refund pending until check_after; a lease token given is also given back. */
export function postponeRefund(merchantId: string, id: string, postponement: RefundPostponement): StatementStep {
  return {
    text: postponeText,
    values: [merchantId, id, timestampParam(postponement.checkAfter), postponement.processorReference, postponement.leaseToken ?? null],
  };
}

/**
 * The reconciler's claim: due pending refunds not under an unexpired lease,
 * earliest check first, `for update skip locked` so claims on several
 * instances never wait on each other or take the same row, each leased with
 * a fresh token on the database's clock (now()), as the delivery queue does.
 */
const claimText = `
  with due as (
    select merchant_id, id from refunds
    where status = 'pending' and check_after <= $1 and (lease_expires_at is null or lease_expires_at <= now())
    order by check_after
    limit $2
    for update skip locked
  )
  update refunds r set lease_token = gen_random_uuid()::text, lease_expires_at = now() + $3::int8 * interval '1 millisecond'
  from due where r.merchant_id = due.merchant_id and r.id = due.id
  returning ${refundColumns("r")}, r.lease_token`;
export const claimDue = (now: Date, limit: number, leaseMs: number): StatementStep => ({
  text: claimText,
  values: [timestampParam(now), String(limit), String(leaseMs)],
});

const listText = `select ${refundColumns("r")} from refunds r
  where r.merchant_id = $1 and r.payment_intent_id = $2
  order by r.created_at desc, r.id desc limit $3`;
const listAfterText = `select ${refundColumns("r")} from refunds r
  where r.merchant_id = $1 and r.payment_intent_id = $2 and (r.created_at, r.id) < ($4::timestamptz, $5)
  order by r.created_at desc, r.id desc limit $3`;
/** A keyset page of one intent's refunds, newest first (refunds_intent_created_idx). */
export function listByIntent(query: RefundListQuery): StatementStep {
  const values = [query.merchantId, query.paymentIntentId, String(query.limit)];
  if (!query.after) return { text: listText, values };
  return { text: listAfterText, values: [...values, timestampParam(query.after.createdAt), query.after.id] };
}
