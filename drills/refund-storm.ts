import { randomBytes } from "node:crypto";
import { createTestDatabase, queryDatabase, type TestDatabase } from "../test/support/postgres.js";
import { startServerProcess, type ServerProcess } from "../test/support/server-process.js";
import type { DrillReport } from "./support/drill-report.js";
import { drillServerEnv, newDrillKey } from "./support/process-target.js";

export interface RefundStormOptions {
  /** Concurrent refund requests on the one intent. */
  refunds: number;
  /** The intent's amount in kobo. */
  amount: number;
}

/** One refund request's answer. */
interface Answer {
  status: number;
  id?: string;
  amount?: string;
  refundStatus?: string;
  reference: string;
  ms: number;
}

/**
 * runRefundStorm pays one intent, then sends `refunds` concurrent refunds of
 * it (amounts of 700 to 1900 kobo, every tenth "what is left", every seventh
 * a retry of the one before), alternating between the service's processes:
 * two processes on one fresh PostgreSQL database, then one process on the
 * in-memory store. Only the reservation under the intent's lock stands
 * between them and refunding more than was paid: the drill passes when no
 * answer is a 5xx, the refunds add up to at most the amount, the stored
 * amountRefunded equals them, every retry answered the refund its reference
 * made, and what was refused did not fit.
 */
export async function runRefundStorm(options: RefundStormOptions): Promise<DrillReport> {
  const cases = [
    { name: "PostgreSQL, 2 processes", processes: 2, postgres: true },
    { name: "memory, 1 process", processes: 1, postgres: false },
  ];
  const rows: string[] = [];
  const figures: string[] = [];
  let passed = true;
  const headlines: string[] = [];
  for (const c of cases) {
    const result = await stormOnce(options, c.processes, c.postgres);
    passed &&= result.passed;
    headlines.push(`${c.name}: ${result.refunded}/${options.amount} kobo in ${result.created} refunds, ${result.fivexx} 5xx`);
    rows.push(
      `| ${c.name} | ${result.created} | ${result.replayed} | ${result.refused} | ${result.fivexx} | ${result.refunded} | ${result.stored ?? "n/a"} | ${result.p50.toFixed(0)} | ${result.p99.toFixed(0)} | ${result.seconds.toFixed(2)} | ${result.passed ? "yes" : "NO"} |`,
    );
    figures.push(...result.problems.map((p) => `${c.name}: ${p}`));
  }
  return {
    name: "Refund storm",
    did: `one intent of ${options.amount} kobo paid, then ${options.refunds} concurrent refunds of it (700–1900 kobo, every tenth what is left, every seventh a retry of the previous request), alternating between the processes; on PostgreSQL two processes on one fresh database, then one process on memory`,
    headline: headlines.join("; "),
    figures: figures.length > 0 ? figures : ["never over the amount, stored amountRefunded equal to the refunds, every retry the same refund, every refusal a refund that did not fit"],
    table: [
      "| Store | 201 | 200 (retries) | 409 | 5xx or none | kobo refunded | amount_refunded stored | p50 ms | p99 ms | s | within the amount |",
      "|---|---|---|---|---|---|---|---|---|---|---|",
      ...rows,
    ],
    passed,
  };
}

async function stormOnce(options: RefundStormOptions, processes: number, postgres: boolean) {
  const db: TestDatabase | undefined = postgres ? await createTestDatabase() : undefined;
  const merchant = { id: "refunds", key: newDrillKey() };
  const servers: ServerProcess[] = [];
  const problems: string[] = [];
  try {
    const env = { ...drillServerEnv, TEST_HELPERS: "true", PAGE_TOKEN_SECRET: randomBytes(32).toString("base64url") };
    // One after the other: the first migrates the database.
    for (let i = 0; i < processes; i++) servers.push(await startServerProcess({ databaseUrl: db?.url, apiKeys: `${merchant.id}:${merchant.key}`, env }));
    const call = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${merchant.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    const intent = await call(servers[0]!, "POST", "/v2/payment-intents", {
      amount: options.amount,
      customerEmail: "ada@example.com",
      clientReference: "refund-storm",
      paymentMethod: ["card"],
    });
    if (intent.status !== 201) throw new Error(`the intent was not created: ${intent.status} ${JSON.stringify(intent.body)}`);
    const paid = await call(servers[0]!, "POST", `/v2/test-helpers/payment-intents/${intent.body.id}/attempts`, { outcome: "succeeded" });
    if (paid.body.paymentIntent === undefined || paid.status !== 201) throw new Error(`the intent was not paid: ${paid.status} ${JSON.stringify(paid.body)}`);

    const requests = Array.from({ length: options.refunds }, (_, i) => {
      const n = i % 7 === 6 ? i - 1 : i;
      const reference = `storm-${n}`;
      return n % 10 === 9 ? { clientReference: reference } : { amount: 700 + (n % 5) * 300, clientReference: reference };
    });
    const started = performance.now();
    const answers: Answer[] = await Promise.all(
      requests.map(async (body, i) => {
        const t0 = performance.now();
        try {
          const res = await call(servers[i % servers.length]!, "POST", `/v2/payment-intents/${intent.body.id}/refunds`, body);
          return { status: res.status, id: res.body.id, amount: res.body.amount, refundStatus: res.body.status, reference: body.clientReference, ms: performance.now() - t0 };
        } catch {
          return { status: 0, reference: body.clientReference, ms: performance.now() - t0 };
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;

    const created = answers.filter((a) => a.status === 201);
    const refunded = created.reduce((sum, a) => sum + (a.refundStatus === "successful" ? Number(a.amount) : 0), 0);
    const fivexx = answers.filter((a) => a.status >= 500 || a.status === 0).length;
    const other = answers.filter((a) => ![200, 201, 409].includes(a.status) && !(a.status >= 500 || a.status === 0));
    if (fivexx > 0) problems.push(`${fivexx} answers were 5xx or none`);
    if (other.length > 0) problems.push(`unexpected statuses: ${other.map((a) => a.status).join(", ")}`);
    if (refunded > options.amount) problems.push(`refunded ${refunded}, more than the ${options.amount} paid`);
    const firstId = new Map<string, string>();
    for (const a of answers.filter((x) => x.status === 200 || x.status === 201)) {
      const seen = firstId.get(a.reference);
      if (seen && seen !== a.id) problems.push(`${a.reference} answered two refunds`);
      firstId.set(a.reference, a.id!);
    }
    const read = await call(servers[servers.length - 1]!, "GET", `/v2/payment-intents/${intent.body.id}`);
    if (Number(read.body.amountRefunded) !== refunded) problems.push(`the intent shows amountRefunded ${read.body.amountRefunded}, the refunds add up to ${refunded}`);
    const refusedFitting = answers.filter((a) => a.status === 409).length > 0 && options.amount - refunded >= 1900;
    if (refusedFitting) problems.push(`${options.amount - refunded} kobo left, yet refunds were refused`);
    let stored: number | undefined;
    if (db) {
      const { rows } = await queryDatabase<{ refunded: string; total: string }>(
        db.url,
        `select pi.amount_refunded as refunded, coalesce((select sum(r.amount) from refunds r
           where r.merchant_id = pi.merchant_id and r.payment_intent_id = pi.id and r.status <> 'failed'), 0) as total
         from payment_intents pi where pi.merchant_id = $1 and pi.id = $2`,
        [merchant.id, intent.body.id],
      );
      stored = Number(rows[0]!.refunded);
      if (stored !== refunded || Number(rows[0]!.total) !== refunded) problems.push(`stored amount_refunded ${stored} and refund rows ${rows[0]!.total}, answers ${refunded}`);
    }
    const sorted = answers.map((a) => a.ms).sort((x, y) => x - y);
    const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    const alive = servers.every((s) => s.child.exitCode === null && s.child.signalCode === null);
    if (!alive) problems.push("a process died");
    return {
      passed: problems.length === 0,
      problems,
      created: created.length,
      replayed: answers.filter((a) => a.status === 200).length,
      refused: answers.filter((a) => a.status === 409).length,
      fivexx,
      refunded,
      stored,
      p50: quantile(0.5),
      p99: quantile(0.99),
      seconds,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await db?.drop();
  }
}
