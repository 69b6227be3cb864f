/**
 * npm run bench:meta [-- --quick]
 *
 * The meta list filter (meta[name]=value) on PostgreSQL at scale: seeds
 * 1,000,000 intents (100,000 with --quick) straight into a fresh database
 * with one INSERT…SELECT over generate_series per batch (not through the
 * API), their meta and its side rows, 90 % for one merchant and 10 % for
 * another whose every intent carries source=pos (a value statistics call
 * common, matching nothing of the first merchant). Then times REST list
 * requests (a page of 50) of the first merchant in turns, request by
 * request: the unfiltered first page, and the filters a merchant uses (a
 * unique order id, a value half its intents carry, two filters together, the
 * other merchant's common value, a deep page of a common value). Prints p50
 * and p99 of each, each filter's p50 against the unfiltered first page's
 * (the target: within 1.5×), and the plan of each filtered statement
 * (EXPLAIN ANALYZE of the store's own SQL). Exits 1 when a filter misses
 * the target.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import pg from "pg";
import { createPageTokenCodec } from "../src/service/page-token.js";
import { listIntents } from "../src/store/postgres/intent-sql.js";
import { createTestDatabase, postgresUnavailable } from "../test/support/postgres.js";
import { untilReady } from "./scenarios.js";
import { merchants, pageTokenSecret, startService } from "./service.js";
import { extraIntentColumns } from "./support/intent-columns.js";
import { percentile } from "./support/load-result.js";

const { values: flags } = parseArgs({ options: { quick: { type: "boolean", default: false } } });
const total = flags.quick ? 100_000 : 1_000_000;
const requests = flags.quick ? 100 : 400;
const target = 1.5;
const main = merchants.scaleLarge;
const other = merchants.scaleSmall;
const mainRows = Math.round(total * 0.9);
const batch = 250_000;

const began = performance.now();
const log = (line: string) => process.stdout.write(`# [${Math.round((performance.now() - began) / 1000)} s] ${line}\n`);

const unavailable = await postgresUnavailable();
if (unavailable) {
  process.stderr.write(`${unavailable}\nThe meta filter bench needs PostgreSQL: set TEST_DATABASE_URL, or start one on 127.0.0.1:5432.\n`);
  process.exit(1);
}

const db = await createTestDatabase();
const logDir = mkdtempSync(join(tmpdir(), "bench-meta-"));
const server = await startService({ databaseUrl: db.url, logPath: join(logDir, "service.log") });
const client = new pg.Client({ connectionString: db.url });
await client.connect();
let failed = false;
try {
  // The service listens before its migrations are applied: seed once it is ready.
  await untilReady(server.url);
  log(`database ${db.name}; seeding ${total.toLocaleString("en")} intents (${mainRows.toLocaleString("en")} of ${main.id})`);
  const extras = await extraIntentColumns(client);
  const extraNames = extras.map((c) => `, ${c.name}`).join("");
  const extraValues = extras.map((c) => `, ${c.value}`).join("");
  const seedStarted = performance.now();
  for (const [merchant, rows] of [[main.id, mainRows], [other.id, total - mainRows]] as const) {
    for (let start = 1; start <= rows; start += batch) {
      const end = Math.min(rows, start + batch - 1);
      // Intent g was created g seconds before 2026-01-01: its order_id is A-g, its channel web for even g.
      await client.query(
        `insert into payment_intents (
           id, merchant_id, amount, total_amount, currency, country, customer_email, receipt_email,
           status, client_reference, callback_url, transaction, checkout_token, request_fingerprint,
           created_at, updated_at, deleted_at, meta${extraNames})
         select 'pi_seed_' || $1 || '_' || lpad(g::text, 8, '0'), $1, 1000 + g, 1000 + g, 'NGN', 'NG', 'ada@example.com', 'ada@example.com',
           'pending', 'seed-' || g, 'https://shop.example.com/paid', null, $1 || '-seed-token-' || g, md5($1 || g) || md5(g || $1),
           timestamptz '2026-01-01 00:00:00Z' - g * interval '1 second', timestamptz '2026-01-01 00:00:00Z' - g * interval '1 second', null,
           case when $1 = $4 then jsonb_build_array(jsonb_build_object('name', 'source', 'value', 'pos'))
             else jsonb_build_array(jsonb_build_object('name', 'order_id', 'value', 'A-' || g),
                                    jsonb_build_object('name', 'channel', 'value', case when g % 2 = 0 then 'web' else 'app' end)) end
           ${extraValues}
         from generate_series($2::int, $3::int) as g`,
        [merchant, start, end, other.id],
      );
      await client.query(
        `insert into payment_intent_meta (merchant_id, payment_intent_id, name, value, created_at)
         select pi.merchant_id, pi.id, e.name, e.value, pi.created_at
         from payment_intents pi cross join jsonb_to_recordset(pi.meta) as e (name text, value text)
         where pi.merchant_id = $1 and pi.id between 'pi_seed_' || $1 || '_' || lpad($2::text, 8, '0') and 'pi_seed_' || $1 || '_' || lpad($3::text, 8, '0')`,
        [merchant, start, end],
      );
    }
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  await client.query("vacuum analyze payment_intents");
  await client.query("vacuum analyze payment_intent_meta");
  await client.query("checkpoint");
  log(`seeded in ${seedSeconds.toFixed(1)} s, analysed`);

  const codec = createPageTokenCodec(pageTokenSecret);
  const deepG = Math.floor(mainRows * 0.75) & ~1;
  const deepToken = codec.encode(
    { createdAt: new Date(Date.parse("2026-01-01T00:00:00Z") - deepG * 1000), id: `pi_seed_${main.id}_${String(deepG).padStart(8, "0")}` },
    { merchantId: main.id, query: ["payment_intents", "test", "", "", "channel", "web"] },
  );
  const unique = () => `A-${1 + Math.floor(Math.random() * mainRows)}`;
  const targets: { name: string; query: () => string; items: (n: number) => boolean; meta?: () => { name: string; value: string }[]; deep?: boolean; times: number[] }[] = [
    { name: "unfiltered first page", query: () => "pageSize=50", items: (n) => n === 50, times: [] },
    { name: "meta[order_id]=<unique> (1 match)", query: () => `pageSize=50&meta[order_id]=${unique()}`, items: (n) => n === 1, meta: () => [{ name: "order_id", value: unique() }], times: [] },
    { name: "meta[channel]=web (half match), first page", query: () => "pageSize=50&meta[channel]=web", items: (n) => n === 50, meta: () => [{ name: "channel", value: "web" }], times: [] },
    {
      name: "meta[channel]=web&meta[order_id]=<unique> (AND)",
      query: () => {
        const g = 2 * (1 + Math.floor((Math.random() * mainRows) / 2));
        return `pageSize=50&meta[channel]=web&meta[order_id]=A-${Math.min(g, mainRows - (mainRows % 2))}`;
      },
      items: (n) => n === 1,
      meta: () => [{ name: "channel", value: "web" }, { name: "order_id", value: "A-2" }],
      times: [],
    },
    { name: "meta[source]=pos (another merchant's common value, 0 matches)", query: () => "pageSize=50&meta[source]=pos", items: (n) => n === 0, meta: () => [{ name: "source", value: "pos" }], times: [] },
    {
      name: "meta[channel]=web, a page 75 % down",
      query: () => `pageSize=50&meta[channel]=web&pageToken=${encodeURIComponent(deepToken)}`,
      items: (n) => n === 50,
      meta: () => [{ name: "channel", value: "web" }],
      deep: true,
      times: [],
    },
  ];

  const time = async (query: string, items: (n: number) => boolean): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${server.url}/v1/v2/payment-intents?${query}`, { headers: { authorization: `Bearer ${main.key}` }, signal: AbortSignal.timeout(10_000) });
    const body = (await res.json()) as { paymentIntents?: unknown[] };
    const ms = performance.now() - started;
    if (res.status !== 200 || !items(body.paymentIntents?.length ?? -1)) throw new Error(`${query}: HTTP ${res.status}, ${body.paymentIntents?.length} items`);
    return ms;
  };
  const warmup = Math.max(10, Math.ceil(requests / 10));
  for (let i = 0; i < warmup + requests; i++) {
    for (const t of targets) {
      const ms = await time(t.query(), t.items);
      if (i >= warmup) t.times.push(ms);
    }
  }

  const base = percentile([...targets[0]!.times].sort((a, b) => a - b), 50);
  process.stdout.write(`\nREST list of ${main.id} (${mainRows.toLocaleString("en")} of ${total.toLocaleString("en")} intents), ${requests} requests each, in turns\n`);
  process.stdout.write(`| Request | p50 ms | p99 ms | p50 / unfiltered |\n|---|---:|---:|---:|\n`);
  for (const t of targets) {
    const sorted = [...t.times].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const ratio = p50 / base;
    if (t.meta && ratio > target) failed = true;
    process.stdout.write(`| ${t.name} | ${p50.toFixed(2)} | ${percentile(sorted, 99).toFixed(2)} | ${t.meta ? `${ratio.toFixed(2)}×${ratio > target ? " (over 1.5×)" : ""}` : "1.00×"} |\n`);
  }

  process.stdout.write(`\nPlans (EXPLAIN ANALYZE of the store's statement; the first lines of each):\n`);
  const now = new Date();
  for (const t of targets) {
    const deepCursor = t.deep ? codec.decode(deepToken, { merchantId: main.id, query: ["payment_intents", "test", "", "", "channel", "web"] }) : undefined;
    const { text, values } = listIntents({ merchantId: main.id, livemode: false, limit: 51, now, ...(t.meta && { meta: t.meta() }), ...(deepCursor && { after: deepCursor }) });
    const { rows } = await client.query<{ "QUERY PLAN": string }>(`explain (analyze, costs off, timing off, summary on) ${text}`, [...values]);
    const lines = rows.map((r) => r["QUERY PLAN"]);
    const shown = lines.filter((l) => /Index|Scan|Sort|Limit|Loop|Execution/.test(l) && !/earliest|settlement_accounts|payment_intent_splits|Aggregate|CTE/.test(l)).slice(0, 8);
    process.stdout.write(`- ${t.name}\n${shown.map((l) => `    ${l.trim()}`).join("\n")}\n`);
  }
  process.stdout.write(`\n${failed ? "MISSED" : "MET"}: every filter's p50 within ${target}× of the unfiltered first page's\n`);
} finally {
  await client.end();
  await server.stop();
  await db.drop();
  rmSync(logDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
