import { Code, ConnectError } from "@connectrpc/connect";
import type { EventType } from "../../domain/event.js";
import type { EventListQuery, EventStore, StreamCursor } from "../event-store.js";
import { isStorableText } from "../storable-text.js";
import type { Database } from "./database.js";
import { eventColumns, eventColumnCount, readEvent, readPosition } from "./event-sql.js";
import { textArrayParam, timestampParam } from "./sql-values.js";

/**
 * A stream position: "<xid>:<seq>", the writing transaction's id (xid8) and
 * the row's sequence. "0:0" is before every event.
 */
const positionPattern = /^(\d{1,20}):(\d{1,19})$/;
const origin = "0:0";

function parsePosition(cursor: StreamCursor): [string, string] {
  const match = positionPattern.exec(cursor);
  if (!match) throw new ConnectError("the stream cursor is not valid", Code.InvalidArgument);
  return [match[1]!, match[2]!];
}

/** Whether position a comes after position b. */
function isAfter(a: string, b: string): boolean {
  const [ax, as] = parsePosition(a).map(BigInt) as [bigint, bigint];
  const [bx, bs] = parsePosition(b).map(BigInt) as [bigint, bigint];
  return ax > bx || (ax === bx && as > bs);
}

/** The shape of a list query: which optional conditions it has. */
type ListShape = `${boolean}|${boolean}|${boolean}`;
const listTexts = new Map<ListShape, string>();

/**
 * The keyset page, newest first, its conditions fixed per shape (as the
 * intents' list) so the plan reads events_merchant_created_idx, or
 * events_merchant_intent_idx for one intent's events. Parameters: $1
 * merchant, $2 limit, $3 mode, then (when present) type, intent id, cursor
 * time and id.
 */
function listText(shape: ListShape): string {
  let text = listTexts.get(shape);
  if (text) return text;
  const [byType, byIntent, after] = shape.split("|");
  const conditions = ["e.merchant_id = $1", "e.livemode = $3"];
  let n = 3;
  if (byType === "true") conditions.push(`e.type = $${++n}`);
  if (byIntent === "true") conditions.push(`e.payment_intent_id = $${++n}`);
  if (after === "true") conditions.push(`(e.created_at, e.id) < ($${++n}::timestamptz, $${++n})`);
  text = `select ${eventColumns("e")} from events e where ${conditions.join(" and ")} order by e.created_at desc, e.id desc limit $2`;
  listTexts.set(shape, text);
  return text;
}

const byIdText = `select ${eventColumns("e")} from events e where e.merchant_id = $1 and e.id = $2`;

/**
 * The stream's horizon, as a CTE `horizon (xmin)`: the oldest transaction of
 * this statement's snapshot that may still commit events of this database.
 * Only events of transactions below it are read: every transaction below it
 * had ended when the snapshot was taken, and one that starts later gets a
 * larger id, so nothing can later appear before a position read here.
 *
 * It is pg_snapshot_xmin of the snapshot, except that transactions running
 * in other databases of the server, and autovacuum's (an ANALYZE writes
 * statistics, so it takes a transaction id), are passed over
 * (pg_stat_get_activity tells; a transaction it no longer shows, a prepared
 * one or a backend without a database still counts): they cannot write this
 * database's events, and must not hold the stream back. A transaction of
 * this database holds it back while it runs (at most the deadline of a store
 * call).
 *
 * `stale` says a transaction that held the horizon back had ended by the
 * time the statement looked (activity is read after the snapshot is taken,
 * so one of another database that ends in between looks like ours, and one
 * of ours may have just committed): the store reads again with a fresh
 * snapshot, which sees what it committed, instead of answering late.
 */
const horizonCte = `
  snap as materialized (select pg_current_snapshot() as s),
  elsewhere as materialized (
    select a.backend_xid from pg_stat_get_activity(null) a
    where a.backend_xid is not null
      and (a.datid <> (select oid from pg_database where datname = current_database()) or a.backend_type = 'autovacuum worker')
  ),
  held as materialized (
    select x from snap, pg_snapshot_xip(snap.s) as x where not exists (select 1 from elsewhere e where e.backend_xid = xid(x))
  ),
  horizon as materialized (
    select coalesce((select min(x) from held), (select pg_snapshot_xmax(s) from snap)) as xmin,
      exists (select 1 from held where pg_xact_status(held.x) <> 'in progress') as stale
  )`;

/**
 * Events after the cursor below the horizon (horizonCte), in stream order.
 * The last column is the newest readable position of the merchant (all
 * types), judged in the same snapshot: when the page is not full, the cursor
 * moves there, past events of other types.
 */
const readAfterTextOf = (byType: boolean) => `
  with ${horizonCte}
  select ${eventColumns("e")},
    (select h.xid::text || ':' || h.seq::text from events h
      where h.merchant_id = $1 and h.xid < (select xmin from horizon)
      order by h.xid desc, h.seq desc limit 1),
    (select stale from horizon)
  from (values (1)) as one (x)
  left join lateral (
    select * from events e
    where e.merchant_id = $1 and (e.xid, e.seq) > ($2::xid8, $3::int8) and e.xid < (select xmin from horizon)
      ${byType ? "and e.type = any($5::text[])" : ""}
    order by e.xid, e.seq
    limit $4
  ) e on true`;
const readAfterTexts = [readAfterTextOf(false), readAfterTextOf(true)] as const;

const cursorAfterText = `select e.xid::text || ':' || e.seq::text from events e where e.merchant_id = $1 and e.id = $2`;
const headText = `
  with ${horizonCte}
  select (select h.xid::text || ':' || h.seq::text from events h
      where h.merchant_id = $1 and h.xid < (select xmin from horizon)
      order by h.xid desc, h.seq desc limit 1),
    (select stale from horizon)`;

/** How many times a read held back by a transaction that had already ended is made again (horizonCte). */
const staleRereads = 3;

/**
 * Retention: the oldest events before $1 (events_retention_idx), at most $2,
 * leaving any with a pending delivery, deleted with their deliveries in one
 * statement. `skip locked`: two instances sweeping at once take different
 * events. Rows are deleted by ctid (a TID scan): joined to the CTE instead,
 * the planner misjudges its size and reads both tables whole.
 */
const deleteRecordedBeforeText = `
  with doomed as (
    select e.ctid, e.merchant_id, e.id from events e
    where (e.created_at at time zone 'UTC') < ($1::timestamptz at time zone 'UTC')
      and not exists (
        select 1 from webhook_deliveries d
        where d.merchant_id = e.merchant_id and d.event_id = e.id and d.status = 'pending')
    order by (e.created_at at time zone 'UTC')
    limit $2
    for update skip locked
  ), deliveries as (
    delete from webhook_deliveries d where d.ctid = any (array(
      select o.ctid from doomed, lateral (
        select w.ctid from webhook_deliveries w where w.merchant_id = doomed.merchant_id and w.event_id = doomed.id) o))
  )
  delete from events e where e.ctid = any (array(select ctid from doomed))`;

/** The stream's statements, for the plan test (test/postgres/explain-webhooks.test.ts). */
export const streamStatements = { readAfterText: readAfterTexts[0], headText, listText, deleteRecordedBeforeText } as const;

/** createPostgresEventStore reads the events the outbox recorded (EventStore, store/event-store.ts). */
export function createPostgresEventStore(db: Database): EventStore {
  /** Runs a stream statement, again while its horizon was stale (column staleColumn of its first row is "t": text-format boolean). */
  async function runFresh(statement: { text: string; values: string[] }, staleColumn: number) {
    for (let attempt = 0; ; attempt++) {
      const [result] = await db.run(false, [statement]);
      if (result!.rows[0]?.[staleColumn] !== "t" || attempt === staleRereads) return result!;
    }
  }

  return {
    async list(query: EventListQuery) {
      if (!isStorableText(query.merchantId) || !isStorableText(query.paymentIntentId ?? "") || !isStorableText(query.after?.id ?? "")) {
        return [];
      }
      const values: (string | null)[] = [query.merchantId, String(query.limit), String(query.livemode)];
      if (query.type !== undefined) values.push(query.type);
      if (query.paymentIntentId !== undefined) values.push(query.paymentIntentId);
      if (query.after) values.push(timestampParam(query.after.createdAt), query.after.id);
      const shape: ListShape = `${query.type !== undefined}|${query.paymentIntentId !== undefined}|${query.after !== undefined}`;
      const [result] = await db.run(false, [{ text: listText(shape), values }]);
      return result!.rows.map((row) => readEvent(row));
    },

    async findById(merchantId, id) {
      if (!isStorableText(merchantId) || !isStorableText(id)) return undefined;
      const [result] = await db.run(false, [{ text: byIdText, values: [merchantId, id] }]);
      return result!.rows[0] ? readEvent(result!.rows[0]) : undefined;
    },

    async readAfter(merchantId, cursor, limit, types?: readonly EventType[]) {
      const [xid, seq] = parsePosition(cursor);
      if (!isStorableText(merchantId)) return { events: [], cursor };
      const byType = types !== undefined && types.length > 0;
      const values = [merchantId, xid, seq, String(limit), ...(byType ? [textArrayParam(types)] : [])];
      const result = await runFresh({ text: readAfterTexts[byType ? 1 : 0], values }, eventColumnCount + 1);
      const rows = result!.rows.filter((row) => row[0] !== null);
      const events = rows.map((row) => readEvent(row));
      const head = result!.rows[0]?.[eventColumnCount] ?? null;
      let next = rows.length > 0 ? readPosition(rows[rows.length - 1]!) : cursor;
      // A page that is not full read every readable event up to head.
      if (rows.length < limit && head !== null && isAfter(head, next)) next = head;
      return { events, cursor: next };
    },

    async cursorAfter(merchantId, eventId) {
      if (!isStorableText(merchantId) || !isStorableText(eventId)) return undefined;
      const [result] = await db.run(false, [{ text: cursorAfterText, values: [merchantId, eventId] }]);
      return result!.rows[0]?.[0] ?? undefined;
    },

    async headCursor(merchantId) {
      if (!isStorableText(merchantId)) return origin;
      const result = await runFresh({ text: headText, values: [merchantId] }, 1);
      return result.rows[0]?.[0] ?? origin;
    },

    async deleteRecordedBefore(before, limit) {
      const [result] = await db.run(false, [{ text: deleteRecordedBeforeText, values: [timestampParam(before), String(limit)] }]);
      return result!.rowCount ?? 0;
    },
  };
}
