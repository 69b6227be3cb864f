import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { claimStatements } from "../../src/store/postgres/postgres-delivery-queue.js";
import { streamStatements } from "../../src/store/postgres/postgres-event-store.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";

const skip = await postgresUnavailable();

/** A node of EXPLAIN (FORMAT JSON) output. */
interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];

/**
 * The delivery engine's claim and the event stream read indexes, not whole
 * tables, on tables as they grow: 100,000 deliveries (most ended long ago,
 * a backlog of pending ones) over 200 endpoints of 40 merchants, and 100,000
 * events.
 */
describe("PostgreSQL webhook and event query plans", { skip }, () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    await (await openMigratedStores(db.url, { poolMax: 1 })).close();
    const q = (sql: string) => queryDatabase(db.url, sql);
    await q(`insert into merchants (id, name) select 'm_' || m, 'M' from generate_series(1, 40) m`);
    await q(`
      insert into webhook_endpoints (merchant_id, id, url, event_types, status, disabled_reason, secrets, created_at, updated_at)
      select 'm_' || (e % 40 + 1), 'we_' || e, 'https://e' || e || '.example.com/', '{}',
        case when e % 50 = 0 then 'disabled' else 'enabled' end, case when e % 50 = 0 then 'gone' end, '[]', now(), now()
      from generate_series(1, 200) e`);
    await q(`
      insert into events (merchant_id, id, type, payment_intent_id, created_at, payload, body)
      select 'm_' || (n % 40 + 1), 'evt_' || n, 'payment_intent.created', 'pi_' || n,
        timestamptz '2026-01-01' + n * interval '1 second', '\\x00', '{}'
      from generate_series(1, 100000) n`);
    // Endpoint e is merchant e % 40 + 1's, as event n is merchant n % 40 + 1's.
    // Every 50th delivery is pending, due over the last hours or in the next ones.
    await q(`
      insert into webhook_deliveries (merchant_id, id, event_id, endpoint_id, status, next_attempt_at, created_at, updated_at)
      select 'm_' || (n % 40 + 1), 'whd_' || n, 'evt_' || n, 'we_' || coalesce(nullif(n % 200, 0), 200),
        case when n % 50 = 0 then 'pending' else 'succeeded' end,
        case when n % 50 = 0 then timestamptz '2026-06-01' + (n % 7 - 3) * interval '1 hour' end,
        timestamptz '2026-01-01' + n * interval '1 second', timestamptz '2026-01-01' + n * interval '1 second'
      from generate_series(1, 100000) n`);
    await q("analyze");
  });
  after(() => db?.drop());

  async function plan(text: string, values: unknown[]): Promise<PlanNode[]> {
    const { rows } = await queryDatabase<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(db.url, `explain (format json) ${text}`, values);
    return flatten(rows[0]!["QUERY PLAN"][0].Plan);
  }
  const seqScans = (nodes: PlanNode[], relation: string) => nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === relation);
  const indexes = (nodes: PlanNode[]) => new Set(nodes.map((n) => n["Index Name"]).filter((name) => name !== undefined));
  const now = "2026-06-01T00:00:00.000Z";

  it("claims through the due and per-endpoint indexes of pending deliveries", async () => {
    const stranded = await plan(claimStatements.endStrandedText, [now]);
    assert.deepEqual(seqScans(stranded, "webhook_deliveries"), []);
    const candidates = await plan(claimStatements.candidatesText, [now, 10, 20]);
    assert.deepEqual(seqScans(candidates, "webhook_deliveries"), []);
    // Endpoints by a loose scan of the per-endpoint index, their leases through the index of leased rows: never the whole backlog.
    assert.ok(indexes(candidates).has("webhook_deliveries_endpoint_pending_idx"), [...indexes(candidates)].join(", "));
    assert.ok(indexes(candidates).has("webhook_deliveries_leased_idx"), [...indexes(candidates)].join(", "));
    assert.ok(!indexes(candidates).has("webhook_deliveries_due_idx"), [...indexes(candidates)].join(", "));
    const claim = await plan(claimStatements.claimText, ["{m_1,m_2}", "{we_1,we_2}", now, 10, 20, "owner", 60000, 16]);
    assert.deepEqual(seqScans(claim, "webhook_deliveries"), []);
    assert.ok(indexes(claim).has("webhook_deliveries_endpoint_pending_idx"), [...indexes(claim)].join(", "));
    assert.ok(indexes(claim).has("webhook_deliveries_leased_idx"), [...indexes(claim)].join(", "));
    // The one-round-trip forms the queue sends: the same plans, the endpoints passed in settings rather than parameters.
    const locking = await plan(claimStatements.lockCandidatesText, [now, 10, 20]);
    assert.deepEqual(seqScans(locking, "webhook_deliveries"), []);
    assert.ok(indexes(locking).has("webhook_deliveries_endpoint_pending_idx"), [...indexes(locking)].join(", "));
    const claimLocked = await plan(claimStatements.claimLockedText, [now, 10, 20, "owner", 60000, 16]);
    assert.deepEqual(seqScans(claimLocked, "webhook_deliveries"), []);
    assert.ok(indexes(claimLocked).has("webhook_deliveries_endpoint_pending_idx"), [...indexes(claimLocked)].join(", "));
  });

  it("streams and lists events through their merchant indexes", async () => {
    const stream = await plan(streamStatements.readAfterText, ["m_1", "0", "0", 100]);
    assert.deepEqual(seqScans(stream, "events"), []);
    assert.ok(indexes(stream).has("events_merchant_stream_idx"), [...indexes(stream)].join(", "));
    const head = await plan(streamStatements.headText, ["m_1"]);
    assert.deepEqual(seqScans(head, "events"), []);
    const byIntent = await plan(streamStatements.listText("false|true|false"), ["m_1", 50, "false", "pi_41"]);
    assert.ok(indexes(byIntent).has("events_merchant_intent_idx"), [...indexes(byIntent)].join(", "));
    const page = await plan(streamStatements.listText("false|false|true"), ["m_1", 50, "false", "2026-01-01T10:00:00Z", "evt_1"]);
    assert.ok(indexes(page).has("events_merchant_created_idx"), [...indexes(page)].join(", "));
    const retention = await plan(streamStatements.deleteRecordedBeforeText, ["2026-01-01T00:30:00Z", 1000]);
    assert.deepEqual(seqScans(retention, "events"), []);
    assert.ok(indexes(retention).has("events_retention_idx"), [...indexes(retention)].join(", "));
  });
});
