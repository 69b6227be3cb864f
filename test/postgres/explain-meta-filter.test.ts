import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSystemClock } from "../../src/lib/clock.js";
import type { ListQuery } from "../../src/store/payment-intent-store.js";
import { listIntents } from "../../src/store/postgres/intent-sql.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";

const skip = await postgresUnavailable();

const indexName = "payment_intent_meta_filter_idx";

/** A node of EXPLAIN (FORMAT JSON) output. */
interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Relation Name"?: string;
  "Sort Key"?: string[];
  Plans?: PlanNode[];
}

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];

// The meta filter's plan on a table where the planner could be misled: m_b's
// 6,000 intents all carry source=pos, m_main's 20,000 none, so statistics
// say "common" for a value that matches nothing of m_main. (A GIN index on
// a jsonb column walked m_main's whole keyset index there; the side table's
// index starts with the merchant, so every filtered page is one range scan.)
describe("PostgreSQL meta filter query plan", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  const now = new Date("2025-12-31T00:00:00Z");
  let webCursor: { createdAt: Date; id: string };

  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url, { poolMax: 2, statementTimeoutMs: 10_000, clock: createSystemClock() });
    await queryDatabase(db.url, `insert into merchants (id, name) values ('m_main', 'Main'), ('m_b', 'B')`);
    await queryDatabase(
      db.url,
      `insert into payment_intents (
         id, merchant_id, amount, total_amount, currency, country, customer_email, receipt_email,
         status, client_reference, payment_methods, checkout_token, request_fingerprint,
         created_at, updated_at, expires_at, deleted_at, meta)
       select 'pi_' || m.id || '_' || lpad(g::text, 6, '0'), m.id, 1000 + g, 1000 + g, 'NGN', 'NG', 'ada@example.com', 'ada@example.com',
         case when g % 10 = 0 then 'cancelled' else 'pending' end, 'ref-' || g, '{card}', m.id || '-token-' || g, md5(m.id || g) || md5(g || m.id),
         timestamptz '2026-01-01 00:00:00Z' - g * interval '1 second', timestamptz '2026-01-01 00:00:00Z' - g * interval '1 second',
         timestamptz '2026-01-02 00:00:00Z' - g * interval '1 second', case when g % 10 = 0 then timestamptz '2026-01-02 00:00:00Z' end,
         case when m.id = 'm_b' then jsonb_build_array(jsonb_build_object('name', 'source', 'value', 'pos'))
           else jsonb_build_array(jsonb_build_object('name', 'order_id', 'value', 'A-' || g), jsonb_build_object('name', 'channel', 'value', case when g % 2 = 0 then 'web' else 'app' end)) end
       from (values ('m_main', 20000), ('m_b', 6000)) as m (id, n) cross join lateral generate_series(1, m.n) as g`,
    );
    await queryDatabase(
      db.url,
      `insert into payment_intent_meta (merchant_id, payment_intent_id, name, value, created_at)
       select pi.merchant_id, pi.id, e.name, e.value, pi.created_at from payment_intents pi cross join jsonb_to_recordset(pi.meta) as e (name text, value text)`,
    );
    await queryDatabase(db.url, "analyze");
    const deep = await queryDatabase<{ created_at: Date; id: string }>(
      db.url,
      `select pi.created_at, pi.id from payment_intents pi join payment_intent_meta m on m.merchant_id = pi.merchant_id and m.payment_intent_id = pi.id
       where pi.merchant_id = 'm_main' and pi.deleted_at is null and m.name = 'channel' and m.value = 'web'
       order by pi.created_at desc, pi.id desc offset 7000 limit 1`,
    );
    webCursor = { createdAt: deep.rows[0]!.created_at, id: deep.rows[0]!.id };
  });

  after(async () => {
    await stores?.close();
    await db?.drop();
  });

  /** sorts: the planner may drive from the rarer filter (found through the same index) and sort its few rows. */
  const cases: { name: string; query: Omit<ListQuery, "now" | "limit" | "merchantId" | "livemode">; rows: number; sorts?: true }[] = [
    { name: "a unique value", query: { meta: [{ name: "order_id", value: "A-12345" }] }, rows: 1 },
    { name: "a common value, first page", query: { meta: [{ name: "channel", value: "web" }] }, rows: 51 },
    { name: "a common value, a deep page", query: { meta: [{ name: "channel", value: "web" }] }, rows: 51 },
    { name: "two filters (AND)", query: { meta: [{ name: "channel", value: "web" }, { name: "order_id", value: "A-12346" }] }, rows: 1, sorts: true },
    { name: "another merchant's common value", query: { meta: [{ name: "source", value: "pos" }] }, rows: 0 },
    { name: "a filter with status", query: { meta: [{ name: "channel", value: "app" }], status: "pending" }, rows: 51 },
  ];

  for (const c of cases) {
    it(`reads ${c.name} from ${indexName} in order, bounded by the merchant, with no sort and no table scan`, async () => {
      const query: ListQuery = { merchantId: "m_main", livemode: false, limit: 51, now, ...c.query };
      if (c.name.includes("deep")) query.after = webCursor;
      const { text, values } = listIntents(query);
      const { rows } = await queryDatabase<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(db.url, `explain (format json) ${text}`, [...values]);
      const nodes = flatten(rows[0]!["QUERY PLAN"][0].Plan);
      const shown = JSON.stringify(nodes.map((n) => [n["Node Type"], n["Index Name"], n["Index Cond"]]));
      const scan = nodes.find((n) => /Index (Only )?Scan/.test(n["Node Type"]) && n["Index Name"] === indexName);
      assert.ok(scan, `no index scan on ${indexName}: ${shown}`);
      assert.match(scan["Index Cond"] ?? "", /merchant_id.*name.*value/s, shown);
      if (query.after) assert.match(scan["Index Cond"] ?? "", /created_at/, shown);
      if (!c.sorts) assert.deepEqual(nodes.filter((n) => /Sort/.test(n["Node Type"]) && /\b(pi|m0)\./.test(JSON.stringify(n["Sort Key"] ?? []))), [], `the plan sorts the page: ${shown}`);
      // No accounts and no splits are seeded here (explain-list.test.ts plans those): reading an empty table beats any index.
      const empty = ["settlement_accounts", "payment_intent_splits"];
      assert.deepEqual(nodes.filter((n) => n["Node Type"] === "Seq Scan" && !empty.includes(n["Relation Name"]!)), [], `the plan scans a table: ${shown}`);
      assert.equal((await stores.intents.list(query)).length, c.rows);
    });
  }

  it("answers a deep filtered page with the matching rows that follow the cursor", async () => {
    const page = await stores.intents.list({ merchantId: "m_main", livemode: false, limit: 3, now, after: webCursor, meta: [{ name: "channel", value: "web" }] });
    const expected = await queryDatabase<{ id: string }>(
      db.url,
      `select pi.id from payment_intents pi where pi.merchant_id = 'm_main' and pi.deleted_at is null and pi.meta @> '[{"name": "channel", "value": "web"}]'
         and (pi.created_at, pi.id) < ($1, $2) order by pi.created_at desc, pi.id desc limit 3`,
      [webCursor.createdAt, webCursor.id],
    );
    assert.deepEqual(page.map((item) => item.intent.id), expected.rows.map((r) => r.id));
  });
});
