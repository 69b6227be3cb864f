import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { PaymentIntentStatus } from "../../src/domain/payment-intent.js";
import { createSystemClock } from "../../src/lib/clock.js";
import type { ListQuery } from "../../src/store/payment-intent-store.js";
import { listIntents } from "../../src/store/postgres/intent-sql.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";

const skip = await postgresUnavailable();

const mainMerchant = "m_main";
const mainRows = 20_000;
const indexName = "payment_intents_merchant_created_idx";

/** A node of EXPLAIN (FORMAT JSON) output. */
interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Relation Name"?: string;
  "Sort Key"?: string[];
  Plans?: PlanNode[];
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}

/** The source text of every file under dir, recursively. */
async function sourcesUnder(dir: URL): Promise<{ path: string; text: string }[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return Promise.all(
    entries
      .filter((e) => e.isFile() && e.name.endsWith(".ts"))
      .map(async (e) => {
        const path = `${e.parentPath}/${e.name}`;
        return { path, text: await readFile(path, "utf8") };
      }),
  );
}

describe("PostgreSQL list query plan", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  /** The `now` of the queries: before every seeded deadline, so status filters see stored statuses. */
  const now = new Date("2025-12-31T00:00:00Z");
  /** The cursor of a page about three quarters of the way down m_main's intents. */
  let deepCursor: { createdAt: Date; id: string };

  before(async () => {
    db = await createTestDatabase();
    const clock = createSystemClock();
    stores = await openMigratedStores(db.url, { poolMax: 2, statementTimeoutMs: 10_000, clock });

    await queryDatabase(
      db.url,
      `insert into merchants (id, name) values ('m_main', 'Main'), ('m_b', 'B'), ('m_c', 'C')`,
    );
    // Five settlement accounts per merchant, so the list item's account is
    // looked up as it is in production (by primary key), not read off an
    // empty table.
    await queryDatabase(
      db.url,
      `insert into settlement_accounts (id, merchant_id, account_name, account_number, bank_name, bank_code, created_at, updated_at)
       select 'sa_' || m.id || '_' || a, m.id, 'Shop', lpad(a::text, 10, '0'), 'Bank', '058',
              timestamptz '2025-01-01 00:00:00Z' + a * interval '1 day', timestamptz '2025-01-01 00:00:00Z' + a * interval '1 day'
       from (values ('m_main'), ('m_b'), ('m_c')) as m (id) cross join generate_series(1, 5) as a`,
    );
    // One statement seeds every merchant: 20,000 intents of m_main and 3,000
    // each of m_b and m_c, one per second going back, some cancelled (and so
    // soft-deleted), some successful, some expired; a third split to an account.
    await queryDatabase(
      db.url,
      `insert into payment_intents (
         id, merchant_id, amount, total_amount, currency, country, customer_email, receipt_email,
         status, client_reference, payment_methods, callback_url, transaction, checkout_token, request_fingerprint,
         created_at, updated_at, expires_at, deleted_at)
       select
         'pi_' || m.id || '_' || lpad(g::text, 6, '0'),
         m.id,
         1000 + g, 1000 + g, 'NGN', 'NG', 'ada@example.com', 'ada@example.com',
         case when g % 10 = 0 then 'cancelled' when g % 7 = 0 then 'successful' when g % 5 = 1 then 'expired' else 'pending' end,
         'ref-' || g,
         '{card,bank_transfer}',
         null,
         case when g % 10 <> 0 and g % 7 = 0 then 'txn-' || g end,
         m.id || '-token-' || g,
         md5(m.id || g) || md5(g || m.id),
         timestamptz '2026-01-01 00:00:00Z' - g * interval '1 second',
         timestamptz '2026-01-01 00:00:00Z' - g * interval '1 second',
         timestamptz '2026-01-02 00:00:00Z' - g * interval '1 second',
         case when g % 10 = 0 then timestamptz '2026-01-02 00:00:00Z' end
       from (values ('m_main', $1::int), ('m_b', 3000), ('m_c', 3000)) as m (id, n)
       cross join lateral generate_series(1, m.n) as g`,
      [mainRows],
    );
    await queryDatabase(
      db.url,
      `insert into payment_intent_splits (payment_intent_id, position, merchant_id, settlement_account_id, split_amount)
       select id, 0, merchant_id, 'sa_' || merchant_id || '_' || (1 + amount % 5), 100 from payment_intents where amount % 3 = 0`,
    );
    await queryDatabase(db.url, "analyze");

    const deep = await queryDatabase<{ created_at: Date; id: string }>(
      db.url,
      `select created_at, id from payment_intents where merchant_id = $1 and deleted_at is null
       order by created_at desc, id desc offset 15000 limit 1`,
      [mainMerchant],
    );
    deepCursor = { createdAt: deep.rows[0]!.created_at, id: deep.rows[0]!.id };
  });

  after(async () => {
    await stores?.close();
    await db?.drop();
  });

  it("seeded the intents", async () => {
    const { rows } = await queryDatabase<{ merchant_id: string; n: string }>(
      db.url,
      "select merchant_id, count(*) as n from payment_intents group by merchant_id order by merchant_id",
    );
    assert.deepEqual(rows, [
      { merchant_id: "m_b", n: "3000" },
      { merchant_id: "m_c", n: "3000" },
      { merchant_id: "m_main", n: String(mainRows) },
    ]);
  });

  const cases: { name: string; after: boolean; status?: PaymentIntentStatus }[] = [
    { name: "the first page", after: false },
    { name: "a deep page after a cursor", after: true },
    { name: "the first page filtered by status", after: false, status: "successful" },
    { name: "a deep page filtered by status", after: true, status: "pending" },
    { name: "a deep page filtered by expired, lapsed pending included", after: true, status: "expired" },
  ];

  for (const c of cases) {
    it(`reads ${c.name} from ${indexName} in order, with no sort`, async () => {
      const query: ListQuery = { livemode: false, merchantId: mainMerchant, limit: 51, status: c.status, now };
      if (c.after) query.after = deepCursor;
      // The store's own statement and parameters, planned as the store's
      // unnamed statements are: with the values bound.
      const { text, values } = listIntents(query);
      assert.doesNotMatch(text, /\boffset\b/i, text);

      const { rows } = await queryDatabase<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(db.url, `explain (format json) ${text}`, [...values]);
      const nodes = flatten(rows[0]!["QUERY PLAN"][0].Plan);
      const shown = JSON.stringify(nodes.map((n) => [n["Node Type"], n["Index Name"], n["Index Cond"]]));
      const scan = nodes.find(
        (n) => (n["Node Type"] === "Index Scan" || n["Node Type"] === "Index Only Scan") && n["Index Name"] === indexName,
      );
      assert.ok(scan, `no index scan on ${indexName}: ${shown}`);
      // The page must come off the index in order. (Finding the merchant's
      // earliest account may sort its few accounts.)
      assert.deepEqual(
        nodes.filter((n) => /Sort/.test(n["Node Type"]) && JSON.stringify(n["Sort Key"] ?? []).includes("pi.")),
        [],
        `the plan sorts the page: ${shown}`,
      );
      assert.deepEqual(
        // Five accounts per merchant fit in one page: reading the table beats any index.
        nodes.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] !== "settlement_accounts"),
        [],
        `the plan scans a table: ${shown}`,
      );
      // The cursor must bound the index scan, not filter its output: only
      // then does a deep page cost what the first does.
      assert.match(scan["Index Cond"] ?? "", /merchant_id/, shown);
      if (c.after) assert.match(scan["Index Cond"] ?? "", /created_at/, shown);
    });
  }

  it("answers a deep page with the rows that follow the cursor", async () => {
    const rows = (await stores.intents.list({ livemode: false, merchantId: mainMerchant, limit: 3, after: deepCursor, now })).map((item) => item.intent);
    const expected = await queryDatabase<{ id: string }>(
      db.url,
      `select id from payment_intents where merchant_id = $1 and deleted_at is null and (created_at, id) < ($2, $3)
       order by created_at desc, id desc limit 3`,
      [mainMerchant, deepCursor.createdAt, deepCursor.id],
    );
    assert.deepEqual(
      rows.map((r) => r.id),
      expected.rows.map((r) => r.id),
    );
  });

  it("uses no OFFSET in any PostgreSQL store query", async () => {
    const files = await sourcesUnder(new URL("../../src/store/postgres/", import.meta.url));
    assert.ok(files.length >= 5, "found the store sources");
    for (const { path, text } of files) {
      // Comments may mention OFFSET to say it is not used; code may not.
      const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
      assert.doesNotMatch(code, /\boffset\b/i, `${path} uses OFFSET`);
    }
  });
});
