import type { EventRecord } from "../../domain/event.js";
import type { EventOutbox } from "../event-store.js";
import { deliveryValues, render, type EventChange } from "./event-sql.js";
import {
  firstSplitAccount,
  insertColumns,
  insertParameterCount,
  insertSplitsCte,
  insertValues,
  insertValuesTyped,
  intentColumns,
  livemodeParameter,
  merchantParameter,
  referenceParameter,
} from "./intent-sql.js";
import type { StatementStep } from "./statement-pipeline.js";
import { textArrayParam, timestampParam } from "./sql-values.js";

/**
 * The create with its event in one statement, for a create whose outbox
 * context is remembered (event-context-cache.ts), so its event is rendered
 * before the statement is sent. In the statement's one snapshot it checks
 * that the remembered context holds (the list item's account: the first
 * split's, else the merchant's earliest of the intent's mode; the set of
 * enabled endpoints of that mode taking the type), and only then inserts
 * the intent, its splits, its event and the event's deliveries; an intent
 * the insert did not write (a replay: ON CONFLICT DO NOTHING, no error)
 * records nothing. An endpoint or account
 * committed after the snapshot is as concurrent as one made after the
 * commit. When the context does not hold, nothing is written, and the store
 * creates again the long way, reading it.
 *
 * One row: holds?, inserted?, then the intent stored under the reference if
 * this snapshot sees one (a replay). Parameters: insertIntent's (insertValues),
 * then thirteen in the order of the outbox's recordText (event-sql.ts), but
 * the one event's columns as scalars (its payload a Buffer, sent in binary)
 * where recordText takes arrays of events: merchant, id, type, intent, time,
 * payload, body; the deliveries' five arrays; the event's mode. Then the
 * account id expected (null: none), the event type, and the endpoint ids
 * expected.
 */
/** $n after the create's own parameters: n = 1 is the first of recordText's. */
const p = (n: number) => `$${insertParameterCount + n}`;
const createWithEventText = `
  with verdict as materialized (
    select
      coalesce(${firstSplitAccount},
        (select f.id from settlement_accounts f
          where f.merchant_id = ${merchantParameter} and f.livemode = ${livemodeParameter}::boolean order by f.created_at, f.id limit 1))
        is not distinct from ${p(14)} as account_holds,
      coalesce((select array_agg(w.id) from webhook_endpoints w
        where w.merchant_id = ${merchantParameter} and w.livemode = ${livemodeParameter}::boolean and w.status = 'enabled' and w.deleted_at is null
          and (cardinality(w.event_types) = 0 or ${p(15)} = any(w.event_types))), '{}') as endpoint_ids
  ), decision as materialized (
    select account_holds and endpoint_ids @> ${p(16)}::text[] and endpoint_ids <@ ${p(16)}::text[] as holds from verdict
  ), inserted as (
    insert into payment_intents (${insertColumns})
    select ${insertValuesTyped} where (select holds from decision)
    on conflict (merchant_id, livemode, client_reference) do nothing
    returning id, merchant_id
  ), ${insertSplitsCte}, recorded as (
    insert into events (merchant_id, id, type, payment_intent_id, created_at, payload, body, livemode)
    select ${p(1)}::text, ${p(2)}::text, ${p(3)}::text, ${p(4)}::text, ${p(5)}::timestamptz, ${p(6)}::bytea, ${p(7)}::text, ${p(13)}::boolean
    where exists (select 1 from inserted)
  ), delivered as (
    insert into webhook_deliveries (merchant_id, id, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
    select d.merchant_id, d.id, d.event_id, d.endpoint_id, 'pending', d.at, d.at, d.at
    from unnest(${p(8)}::text[], ${p(9)}::text[], ${p(10)}::text[], ${p(11)}::text[], ${p(12)}::timestamptz[]) as d (merchant_id, id, event_id, endpoint_id, at)
    where exists (select 1 from inserted)
  )
  select (select holds from decision), exists (select 1 from inserted), ${intentColumns("pi")}
  from (values (1)) as one (x)
  left join payment_intents pi
    on pi.merchant_id = ${merchantParameter} and pi.livemode = ${livemodeParameter}::boolean and pi.client_reference = ${referenceParameter}`;

/** createWithEvent is the one-statement create of change's intent with its event, as change's remembered context expects. */
export function createWithEvent(outbox: EventOutbox, change: EventChange): { step: StatementStep; events: EventRecord[]; deliveries: number } {
  const { events, deliveries } = render(outbox, [change]);
  const event = events[0]!;
  const { payload } = event;
  return {
    events,
    deliveries: deliveries.length,
    step: {
      text: createWithEventText,
      values: [
        ...insertValues(change.intent),
        event.merchantId,
        event.id,
        event.type,
        event.paymentIntentId,
        timestampParam(event.createdAt),
        Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength),
        event.body,
        ...deliveryValues(deliveries),
        String(event.livemode),
        change.context.account?.id ?? null,
        change.type,
        textArrayParam(deliveries.map((d) => d.endpointId)),
      ],
    },
  };
}
