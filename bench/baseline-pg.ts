/**
 * Reference: the database's floor for a create. A plain `pg` pool (no HTTP,
 * no ORM) writing the row a create writes (an intent, its payment methods in
 * its text[] column) from a fixed number of concurrent workers, with the
 * service's pool size. MODE picks how:
 *
 * - `cte`: one statement with bind parameters, in one round trip (atomic on
 *   its own, as every statement is);
 * - `transaction`: BEGIN, the INSERT, COMMIT: three round trips.
 *
 * A process of its own, driven by `npm run bench` through stdin (see
 * support/command-child.ts), so the bench reads the CPU it spends from /proc;
 * reads DATABASE_URL, MERCHANT_ID, POOL_MAX and MODE, and answers
 * {run: {runId, seconds, concurrency}} with a LoadResult (outcomes "ok" or
 * "error <SQLSTATE>").
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { serveCommands } from "./support/command-child.js";
import { extraIntentColumns, knownIntentColumns, type ExtraColumn } from "./support/intent-columns.js";
import { summarize, type LoadResult } from "./support/load-result.js";

const env = (name: string, fallback?: string) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const mode = env("MODE");
if (mode !== "cte" && mode !== "transaction") throw new Error(`MODE must be cte or transaction, not ${mode}`);
const merchantId = env("MERCHANT_ID");
const pool = new pg.Pool({ connectionString: env("DATABASE_URL"), max: Number(env("POOL_MAX", "10")), application_name: `bench-pg-${mode}` });

let extras: ExtraColumn[] = [];
let insertIntent = "";

/** intentParameters are the bind values of one intent row, in the order of the insert's columns. */
function intentParameters(id: string, reference: string): unknown[] {
  const now = new Date();
  return [
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
    ...extras.map((c) => c.parameter(now)),
  ];
}

async function prepare(): Promise<void> {
  extras = await extraIntentColumns(pool);
  const columns = [...knownIntentColumns, ...extras.map((c) => c.name)];
  const values = columns.map((_, i) => `$${i + 1}`).join(", ");
  insertIntent = `insert into payment_intents (${columns.join(", ")}) values (${values})`;
}

let counter = 0;
async function createOne(runId: string): Promise<void> {
  const id = `pi_${randomUUID()}`;
  const reference = `pg-${runId}-${++counter}`;
  if (mode === "cte") {
    await pool.query(insertIntent, intentParameters(id, reference));
    return;
  }
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query(insertIntent, intentParameters(id, reference));
    await client.query("commit");
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function run({ runId, seconds, concurrency }: { runId: string; seconds: number; concurrency: number }): Promise<LoadResult> {
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      let outcome = "ok";
      try {
        await createOne(runId);
      } catch (error) {
        outcome = `error ${(error as { code?: string }).code ?? (error as Error).message}`;
      }
      latencies.push(performance.now() - sent);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return summarize(latencies, (performance.now() - started) / 1000, 0, outcomes);
}

await serveCommands<{ run: { runId: string; seconds: number; concurrency: number } }>(
  prepare,
  (command) => run(command.run),
  () => pool.end(),
);
