import type { ApiKeyRecord } from "../../domain/api-key.js";
import type { EventRecord, EventType } from "../../domain/event.js";
import type { PaymentIntentRecord } from "../../domain/payment-intent.js";
import type { RefundRecord } from "../../domain/refund.js";
import type { SettlementAccountRecord } from "../../domain/settlement-account.js";
import type { EventOutbox } from "../event-store.js";
import { accountColumnCount, accountColumns, readAccount } from "./account-rows.js";
import type { StatementStep } from "./statement-pipeline.js";
import { epochMs, parseEpochMs, textArrayParam, timestampParam } from "./sql-values.js";

/**
 * The SQL of recorded events: how the outbox writes them with their
 * deliveries, and how they are read back. Rows are read by position:
 * eventColumns and readEvent go together, as eventContext and readEventContext.
 */

type Row = readonly (string | null)[];

/** An event's columns, alias t; payload as hex (whatever the session's bytea_output), then its stream position. */
export function eventColumns(t: string): string {
  return [
    `${t}.id`,
    `${t}.merchant_id`,
    `${t}.type`,
    `${t}.payment_intent_id`,
    epochMs(`${t}.created_at`),
    `encode(${t}.payload, 'hex')`,
    `${t}.body`,
    `${t}.xid::text || ':' || ${t}.seq::text`,
    `${t}.livemode`,
  ].join(", ");
}

/** How many columns eventColumns yields. */
export const eventColumnCount = 9;

export function readEvent(row: Row, start = 0): EventRecord {
  return {
    id: row[start]!,
    merchantId: row[start + 1]!,
    type: row[start + 2] as EventType,
    paymentIntentId: row[start + 3]!,
    createdAt: parseEpochMs(row[start + 4]!),
    payload: new Uint8Array(Buffer.from(row[start + 5]!, "hex")),
    body: row[start + 6]!,
    livemode: row[start + 8] === "t",
  };
}

/** The stream position (cursor) column of eventColumns. */
export const readPosition = (row: Row, start = 0): string => row[start + 7]!;

/** A bytea[] parameter: each element in hex input form, quoted like any text element. */
export function byteaArrayParam(values: readonly Uint8Array[]): string {
  return textArrayParam(values.map((value) => `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")}`));
}

/**
 * What the outbox needs besides the changed intent, for intent alias t, read
 * by the statement that makes the change: the list item's settlement account
 * (§2.4: the first split's, else the merchant's earliest; accountSql is the
 * id of the first split's account when t's splits cannot be read, as in the
 * create that writes them), and the merchant's enabled endpoints with the
 * types they take, as JSON.
 */
export function eventContextJoin(t: string, firstSplitAccount?: string): string {
  const first = firstSplitAccount ?? `(select s.settlement_account_id from payment_intent_splits s where s.merchant_id = ${t}.merchant_id and s.payment_intent_id = ${t}.id and s.position = 0)`;
  return `
  left join lateral (
    select ${accountColumns("a")} from settlement_accounts a
    where a.merchant_id = ${t}.merchant_id
      and a.id = coalesce(${first},
        (select f.id from settlement_accounts f where f.merchant_id = ${t}.merchant_id and f.livemode = ${t}.livemode order by f.created_at, f.id limit 1))
  ) acc on true`;
}

/** The columns of eventContextJoin, then the endpoints (alias t again). */
export function eventContextColumns(t: string): string {
  return `acc.*, (select json_agg(json_build_array(w.id, w.event_types)) from webhook_endpoints w
    where w.merchant_id = ${t}.merchant_id and w.livemode = ${t}.livemode and w.status = 'enabled' and w.deleted_at is null)`;
}

/** How many columns eventContextColumns yields. */
export const eventContextColumnCount = 10;

/** EventContext: what eventContextColumns read. */
export interface EventContext {
  account: SettlementAccountRecord | null;
  endpoints: { id: string; eventTypes: string[] }[];
}

export function readEventContext(row: Row, start: number): EventContext {
  const endpoints = row[start + accountColumnCount];
  return {
    account: readAccount(row, start),
    endpoints: endpoints ? (JSON.parse(endpoints) as [string, string[]][]).map(([id, eventTypes]) => ({ id, eventTypes })) : [],
  };
}

/** One change that records an event: its type, the intent right after it, its context and time. */
export interface EventChange {
  type: EventType;
  intent: PaymentIntentRecord;
  context: EventContext;
  at: Date;
  /** The refund a refund.* event reports, right after the change. */
  refund?: RefundRecord;
}

/**
 * One statement writes the events and their deliveries. The endpoints were
 * read by the statement that made the change; this one takes only those
 * still enabled and not deleted, so an endpoint disabled in between gets no
 * delivery (one registered in between is as concurrent as if it had come
 * after the commit). Its foreign key check sees the events inserted by the
 * same statement.
 */
const recordText = `
  with recorded as (
    insert into events (merchant_id, id, type, payment_intent_id, created_at, payload, body, livemode)
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::bytea[], $7::text[], $13::boolean[])
  )
  insert into webhook_deliveries (merchant_id, id, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
  select d.merchant_id, d.id, d.event_id, d.endpoint_id, 'pending', d.at, d.at, d.at
  from unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::timestamptz[]) as d (merchant_id, id, event_id, endpoint_id, at)
  join webhook_endpoints w on w.merchant_id = d.merchant_id and w.id = d.endpoint_id and w.status = 'enabled' and w.deleted_at is null`;
/** The events' modes, a boolean[]: recordText's $13. */
const modesParam = (events: readonly EventRecord[]) => `{${events.map((e) => String(e.livemode)).join(",")}}`;

/** A delivery the outbox makes: one event for one endpoint. */
interface NewDeliveryRow {
  merchantId: string;
  id: string;
  eventId: string;
  endpointId: string;
  at: Date;
}

/** Renders each change through the outbox, with one delivery per endpoint of its context taking its type. */
export function render(outbox: EventOutbox, changes: readonly EventChange[]): { events: EventRecord[]; deliveries: NewDeliveryRow[] } {
  const events: EventRecord[] = [];
  const deliveries: NewDeliveryRow[] = [];
  for (const change of changes) {
    const rendered = outbox.render(change.type, { intent: change.intent, account: change.context.account }, change.at, change.refund);
    const event: EventRecord = {
      ...rendered,
      merchantId: change.intent.merchantId,
      type: change.type,
      paymentIntentId: change.intent.id,
      livemode: change.intent.livemode,
    };
    events.push(event);
    for (const endpoint of change.context.endpoints) {
      if (endpoint.eventTypes.length > 0 && !endpoint.eventTypes.includes(change.type)) continue;
      deliveries.push({ merchantId: event.merchantId, id: outbox.deliveryId(), eventId: event.id, endpointId: endpoint.id, at: event.createdAt });
    }
  }
  return { events, deliveries };
}

/** The values of recordText ($1–$13): the events' columns, then the deliveries', then the events' modes. */
function recordValues(events: readonly EventRecord[], deliveries: readonly NewDeliveryRow[]): (string | null)[] {
  return [
    textArrayParam(events.map((e) => e.merchantId)),
    textArrayParam(events.map((e) => e.id)),
    textArrayParam(events.map((e) => e.type)),
    textArrayParam(events.map((e) => e.paymentIntentId)),
    textArrayParam(events.map((e) => timestampParam(e.createdAt))),
    byteaArrayParam(events.map((e) => e.payload)),
    textArrayParam(events.map((e) => e.body)),
    ...deliveryValues(deliveries),
    modesParam(events),
  ];
}

/** The deliveries' five arrays (recordText's $8–$12): merchants, ids, events, endpoints, due times. */
export function deliveryValues(deliveries: readonly NewDeliveryRow[]): string[] {
  return [
    textArrayParam(deliveries.map((d) => d.merchantId)),
    textArrayParam(deliveries.map((d) => d.id)),
    textArrayParam(deliveries.map((d) => d.eventId)),
    textArrayParam(deliveries.map((d) => d.endpointId)),
    textArrayParam(deliveries.map((d) => timestampParam(d.at))),
  ];
}

/** The enabled endpoints of a merchant taking an event type, with their mode: where a key event may be delivered ($1 merchant, $2 type). */
export const keyEventEndpointsText = `
  select w.id, w.livemode from webhook_endpoints w
  where w.merchant_id = $1 and w.status = 'enabled' and w.deleted_at is null
    and (cardinality(w.event_types) = 0 or $2 = any(w.event_types))`;

/**
 * recordKeyEvent renders an api_key.* event through the outbox and returns
 * the step that writes it and one pending delivery per endpoint given (read
 * by keyEventEndpointsText in the same transaction); undefined when the
 * outbox renders no key events.
 */
export function recordKeyEvent(
  outbox: EventOutbox,
  type: EventType,
  key: ApiKeyRecord,
  at: Date,
  endpointIds: readonly string[],
): { step: StatementStep; event: EventRecord } | undefined {
  const rendered = outbox.renderKey?.(type, key, at);
  if (!rendered) return undefined;
  const event: EventRecord = { ...rendered, merchantId: key.merchantId, type, paymentIntentId: "", livemode: key.mode === "live" };
  const deliveries = endpointIds.map((endpointId) => ({ merchantId: key.merchantId, id: outbox.deliveryId(), eventId: event.id, endpointId, at: event.createdAt }));
  return { event, step: { text: recordText, values: recordValues([event], deliveries) } };
}

/**
 * recordEvents renders each change through the outbox and returns the step
 * that writes the events and one pending delivery (due at the event's time)
 * per endpoint taking its type, with the records to announce after COMMIT
 * and how many deliveries at most it writes.
 */
export function recordEvents(
  outbox: EventOutbox,
  changes: readonly EventChange[],
): { step: StatementStep; events: EventRecord[]; deliveries: number } {
  const { events, deliveries } = render(outbox, changes);
  return { events, deliveries: deliveries.length, step: { text: recordText, values: recordValues(events, deliveries) } };
}
