/**
 * npx tsx bench/store-cost.ts [--calls N] [--baseline <git commit>]
 *
 * What one store call costs, without HTTP: node CPU (process.cpuUsage) and
 * the database backends' CPU (/proc/<pid>/stat, when readable) per call, and
 * wall time, over N sequential calls after a warm-up, for:
 * - the PostgreSQL stores (create; a page of 50 of a merchant's 1,000 intents),
 *   directly and through a PgBouncer in transaction pooling (when installed);
 * - the same statements sent as a bare pipeline on one pg client (no pool, no
 *   deadline statement, no backstop timer): the difference is what the
 *   deadline mechanism and the pool cost;
 * - the in-memory stores, for the ratio the list target is stated in;
 * - with --baseline, the PostgreSQL stores of another commit (its src/ is
 *   extracted with git archive under tmp/, which git ignores) on a database
 *   migrated by its own migrations, measured in the same run, so the two
 *   versions see the same machine. Through PgBouncer the baseline gets
 *   ignore_startup_parameters = statement_timeout, which older stores send.
 * Prints a markdown table. Not a test: figures move with the machine's load.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import type { PaymentIntentRecord } from "../src/domain/payment-intent.js";
import { createSystemClock } from "../src/lib/clock.js";
import { createIdGenerator } from "../src/lib/ids.js";
import { createMemoryStores } from "../src/store/memory/create-memory-stores.js";
import { insertIntent, listIntents } from "../src/store/postgres/intent-sql.js";
import { StatementPipeline, type StatementStep } from "../src/store/postgres/statement-pipeline.js";
import { pgBouncerUnavailable, startPgBouncer } from "../test/postgres/support/pgbouncer.js";
import { adminQuery, adminUrl, createTestDatabase, openMigratedStores, queryDatabase } from "../test/support/postgres.js";

const { values: flags } = parseArgs({ options: { calls: { type: "string", default: "2000" }, baseline: { type: "string" } } });
const calls = Number(flags.calls);
const clock = createSystemClock();
const ids = createIdGenerator(clock);
const merchantId = "m_cost";
const ticksPerSecond = 100;

function newIntent(): PaymentIntentRecord {
  const now = clock.now();
  return {
    livemode: false,
    id: ids.paymentIntentId(false),
    merchantId,
    amount: 50_000n,
    totalAmount: 50_000n,
    currency: "NGN",
    country: "NG",
    customerEmail: "ada@example.com",
    receiptEmail: "ada@example.com",
    status: "pending",
    clientReference: `cost-${ids.paymentIntentId(false)}`,
    paymentMethods: ["card", "bank_transfer"],
    callbackUrl: "https://shop.example.com/paid",
    transaction: null,
    nextActionUrl: null,
    splits: [],
    meta: [],
    checkoutToken: ids.checkoutToken(merchantId),
    requestFingerprint: "0".repeat(64),
    createdAt: now,
    updatedAt: now,
    expiresAt: new Date(now.getTime() + 86_400_000),
    deletedAt: null,
    amountRefunded: 0n,
  };
}

/** CPU ticks (user + system) of the database's backends, or undefined when /proc is not readable. */
async function backendTicks(database: string): Promise<number | undefined> {
  const { rows } = await adminQuery<{ pid: number }>(
    "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend' and pid <> pg_backend_pid()",
    [database],
  );
  try {
    return rows.reduce((sum, { pid }) => {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      return sum + Number(fields[11]) + Number(fields[12]);
    }, 0);
  } catch {
    return undefined;
  }
}

interface Row {
  scenario: string;
  nodeUs: number;
  serverUs: number | undefined;
  wallUs: number;
}

async function measure(scenario: string, database: string | undefined, call: () => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < Math.min(500, calls); i++) await call();
  const ticks = database ? await backendTicks(database) : undefined;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await call();
  const wallUs = ((performance.now() - started) * 1000) / calls;
  const used = process.cpuUsage(cpu);
  const ticksAfter = database ? await backendTicks(database) : undefined;
  const serverUs =
    ticks !== undefined && ticksAfter !== undefined ? ((ticksAfter - ticks) / ticksPerSecond / calls) * 1_000_000 : undefined;
  return { scenario, nodeUs: (used.user + used.system) / calls, serverUs, wallUs };
}

/** Sends steps as one pipeline on a bare client: the statements alone. */
function bare(client: pg.Client, steps: readonly StatementStep[]): Promise<unknown> {
  return new Promise((resolve, reject) => client.query(new StatementPipeline(steps, (error, results) => (error ? reject(error) : resolve(results)))));
}

async function seed(intents: { insert(record: PaymentIntentRecord): Promise<unknown> }): Promise<void> {
  for (let i = 0; i < 1000; i++) await intents.insert(newIntent());
}

/** The stores of another commit, as far as this script uses them. */
interface BaselineStores {
  intents: { insert(record: PaymentIntentRecord): Promise<unknown>; list(query: object): Promise<unknown> };
  apiKeys: { ensureMerchant(id: string, name: string): Promise<void> };
  close(): Promise<void>;
}
type OpenBaseline = (options: object) => Promise<BaselineStores>;

/** Extracts the commit's src/ under tmp/ and loads its openPostgresStores. */
async function loadBaseline(commit: string): Promise<OpenBaseline> {
  const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim();
  const dir = join(root, "tmp", `store-cost-${commit.replace(/[^A-Za-z0-9]/g, "")}`);
  mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git archive ${JSON.stringify(commit)} src | tar -x -C ${JSON.stringify(dir)}`], { cwd: root });
  const module = (await import(pathToFileURL(join(dir, "src/store/postgres/open-postgres-stores.ts")).href)) as { openPostgresStores: OpenBaseline };
  return module.openPostgresStores;
}

/** Measures a version's create and list page on a database of its own, directly and (if given) through PgBouncer. */
async function measureVersion(
  label: string,
  open: (url: string, migrate: boolean) => Promise<BaselineStores>,
  bouncerUrl: ((url: string) => string) | undefined,
): Promise<void> {
  const db = await createTestDatabase();
  try {
    const setup = await open(db.url, true);
    await setup.apiKeys.ensureMerchant(merchantId, "Cost");
    await seed(setup.intents);
    await setup.close();
    await queryDatabase(db.url, "vacuum analyze");
    const paths = [{ name: "direct", url: db.url }, ...(bouncerUrl ? [{ name: "PgBouncer", url: bouncerUrl(db.url) }] : [])];
    for (const path of paths) {
      const stores = await open(path.url, false);
      try {
        rows.push(await measure(`${label} ${path.name}: create`, db.name, () => stores.intents.insert(newIntent())));
        rows.push(await measure(`${label} ${path.name}: list page of 50`, db.name, () => stores.intents.list(listQuery())));
      } finally {
        await stores.close();
      }
    }
  } finally {
    await db.drop();
  }
}

const rows: Row[] = [];
const listQuery = () => ({ merchantId, livemode: false, limit: 50, now: clock.now() });

const memory = createMemoryStores();
await seed(memory.intents);
rows.push(await measure("memory: create", undefined, () => memory.intents.insert(newIntent())));
rows.push(await measure("memory: list page of 50", undefined, () => memory.intents.list(listQuery())));

const db = await createTestDatabase();
try {
  const setup = await openMigratedStores(db.url, { poolMax: 2 });
  await setup.apiKeys.ensureMerchant(merchantId, "Cost");
  await seed(setup.intents);
  await setup.close();
  await queryDatabase(db.url, "vacuum analyze payment_intents");

  const direct = new URL(db.url);
  const bouncer = pgBouncerUnavailable()
    ? undefined
    : await startPgBouncer({ target: { host: direct.hostname, port: Number(direct.port || 5432) }, poolSize: 10, users: ["postgres"] });
  const paths = [{ name: "direct", url: db.url }, ...(bouncer ? [{ name: "PgBouncer", url: bouncer.urlFor(db.url) }] : [])];
  try {
    for (const path of paths) {
      const stores = await openMigratedStores(path.url, { poolMax: 10, migrate: false });
      const client = new pg.Client({ connectionString: path.url });
      await client.connect();
      try {
        rows.push(await measure(`PostgreSQL ${path.name}: create (store)`, db.name, () => stores.intents.insert(newIntent())));
        rows.push(await measure(`PostgreSQL ${path.name}: create (bare pipeline)`, db.name, () => bare(client, [insertIntent(newIntent())])));
        rows.push(await measure(`PostgreSQL ${path.name}: list page of 50 (store)`, db.name, () => stores.intents.list(listQuery())));
        rows.push(await measure(`PostgreSQL ${path.name}: list page of 50 (bare pipeline)`, db.name, () => bare(client, [listIntents(listQuery())])));
      } finally {
        await client.end();
        await stores.close();
      }
    }
  } finally {
    await bouncer?.stop();
  }
} finally {
  await db.drop();
}

if (flags.baseline) {
  const openBaseline = await loadBaseline(flags.baseline);
  const direct = new URL(adminUrl);
  const target = { host: direct.hostname, port: Number(direct.port || 5432) };
  const bouncer = pgBouncerUnavailable()
    ? undefined
    : await startPgBouncer({ target, poolSize: 10, users: ["postgres"], ignoreStartupParameters: ["statement_timeout"] });
  const common = { poolMax: 10, statementTimeoutMs: 5000, lockTimeoutMs: 2000, clock, ids };
  try {
    await measureVersion(`baseline ${flags.baseline}`, (url, migrate) => openBaseline({ ...common, url, migrate }), bouncer?.urlFor);
    await measureVersion("this version", (url, migrate) => openMigratedStores(url, { poolMax: 10, migrate }), bouncer?.urlFor);
  } finally {
    await bouncer?.stop();
  }
}

const fmt = (us: number | undefined) => (us === undefined ? "n/a" : us.toFixed(0));
process.stdout.write(`\n${calls} sequential calls each, after a warm-up; µs per call.\n\n`);
process.stdout.write("| Scenario | Node CPU µs | PostgreSQL backend CPU µs | Wall µs |\n|---|---:|---:|---:|\n");
for (const row of rows) process.stdout.write(`| ${row.scenario} | ${fmt(row.nodeUs)} | ${fmt(row.serverUs)} | ${fmt(row.wallUs)} |\n`);
