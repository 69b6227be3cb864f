/**
 * The limit of the database for a create: a plain `pg` pool writing the row
 * shape the service writes (an intent and its two payment methods in one
 * transaction: BEGIN, INSERT, INSERT, COMMIT) from a fixed number of
 * concurrent workers, with the service's pool size. No HTTP, no ORM.
 *
 * Run by `npm run bench` as a process of its own; reads DATABASE_URL,
 * MERCHANT_ID, CONCURRENCY, POOL_MAX, WARMUP_SECONDS, DURATION_SECONDS and
 * prints one JSON line: a LoadResult plus peakRssBytes.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { extraIntentColumns, knownIntentColumns } from "./support/intent-columns.js";
import { summarize } from "./support/load-result.js";

const env = (name: string, fallback?: string) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const url = env("DATABASE_URL");
const merchantId = env("MERCHANT_ID");
const concurrency = Number(env("CONCURRENCY", "50"));
const poolMax = Number(env("POOL_MAX", "10"));
const warmupSeconds = Number(env("WARMUP_SECONDS", "3"));
const durationSeconds = Number(env("DURATION_SECONDS", "10"));

const pool = new pg.Pool({ connectionString: url, max: poolMax, application_name: "bench-baseline" });
const extras = await extraIntentColumns(pool);
const columns = [...knownIntentColumns, ...extras.map((c) => c.name)];
const placeholders = [...knownIntentColumns.map((_, i) => `$${i + 1}`), ...extras.map((c) => c.value)];
const insertIntent = `insert into payment_intents (${columns.join(", ")}) values (${placeholders.join(", ")})`;
const insertMethods = "insert into payment_intent_methods (payment_intent_id, position, method) values ($1, 0, $2), ($1, 1, $3)";

let counter = 0;
async function createOne(): Promise<void> {
  const id = `pi_${randomUUID()}`;
  const now = new Date();
  const reference = `pg-${process.pid}-${++counter}`;
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query(insertIntent, [
      id,
      merchantId,
      "50000",
      "50000",
      "NGN",
      "NG",
      "ada@example.com",
      "ada@example.com",
      "pending",
      reference,
      "https://shop.example.com/paid",
      null,
      randomBytes(32).toString("base64url"),
      createHash("sha256").update(reference).digest("hex"),
      now,
      now,
      null,
    ]);
    await client.query(insertMethods, [id, "card", "bank_transfer"]);
    await client.query("commit");
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function drive(seconds: number, record: boolean) {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      try {
        await createOne();
        if (record) latencies.push(performance.now() - sent);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return summarize(latencies, (performance.now() - started) / 1000, errors, 0);
}

await drive(warmupSeconds, false);
const result = await drive(durationSeconds, true);
await pool.end();
process.stdout.write(`${JSON.stringify({ ...result, peakRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
