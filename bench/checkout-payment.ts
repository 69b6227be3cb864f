import { randomBytes } from "node:crypto";
import { testCards } from "../src/processor/test-mode-processor.js";
import { openCheckout, payByCard, seeOther, type OpenedCheckout } from "../test/checkout/support/checkout-client.js";
import { queryDatabase } from "../test/support/postgres.js";
import { merchants, startService } from "./service.js";
import { backendTicksSpent, createDatabaseCpuMeter } from "./support/database-cpu.js";
import { cpuTicks, readClockTicksPerSecond } from "./support/proc-stat.js";
import { statementFigures, type StatementFigure } from "./support/statement-stats.js";
import { describeTableActivity, readTableCounters, tableActivityPer, type TableActivity } from "./support/table-activity.js";

export interface CheckoutPaymentBenchOptions {
  databaseUrl: string;
  /** The bench database's name and an admin URL: the PostgreSQL backends' CPU is read through them. */
  databaseName: string;
  adminUrl: string;
  logPath: string;
  /** TEST_PROCESSOR_LATENCY_MS: every processor call takes this long (the issue's 1000). */
  latencyMs: number;
  /** Customers paying at once (each waits latencyMs for the processor). */
  concurrency: number;
  warmupSeconds: number;
  measureSeconds: number;
}

export interface CheckoutPaymentBenchResult {
  latencyMs: number;
  concurrency: number;
  poolMax: number;
  /** Payments completed (303 to the merchant with status=successful) per second in the measured phase, whenever they began. */
  perSecond: number;
  measured: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than a successful payment, in the measured phase. */
  others: number;
  /** CPU per completed payment in the measured phase (ms): the service process, and its PostgreSQL backends. */
  serviceCpuMs: number;
  databaseCpuMs: number;
  /**
   * WAL bytes per completed payment in the measured phase: its statements'
   * (pg_stat_statements, this database only) when PostgreSQL loaded the
   * module, else the cluster's insert position, which also counts whatever
   * else wrote to the cluster meanwhile (walSource says which).
   */
  walBytesPerPayment: number;
  walSource: "statements" | "cluster";
  /** Each statement per completed payment, when pg_stat_statements was read (as the scenarios' breakdown). */
  statements?: StatementFigure[];
  /** Each table's scans and writes per completed payment (pg_stat_user_tables), what the database did where statements are not counted. */
  tables?: TableActivity[];
  /** Share of one core the service process used in the measured phase. */
  serviceCores: number;
  /** The service's pool in the measured phase, sampled every 250 ms from /metrics: mean busy connections and mean calls waiting for one. */
  poolBusy: number;
  poolWaiting: number;
}

/**
 * runCheckoutPaymentBench (issue 19): card payments through the hosted
 * checkout of one service process on PostgreSQL with the default pool
 * (DB_POOL_MAX=10) and a test processor that takes latencyMs per call. Each
 * customer's page is opened before the clock starts; what is timed is the
 * form post: beginAttempt's short transaction, the processor's latency with
 * no connection held, the settlement's short transaction, and the 303 to
 * the merchant. Payments per second per instance is completed payments over
 * the measured seconds.
 */
export async function runCheckoutPaymentBench(options: CheckoutPaymentBenchOptions): Promise<CheckoutPaymentBenchResult> {
  const poolMax = 10;
  const service = await startService({
    databaseUrl: options.databaseUrl,
    logPath: options.logPath,
    extraEnv: { TEST_PROCESSOR_LATENCY_MS: String(options.latencyMs), DB_POOL_MAX: String(poolMax), LOG_LEVEL: "warn" },
  });
  try {
    // The port is bound before the app is attached (503 until then): wait for readiness.
    for (let i = 0; i < 300; i++) {
      const ready = await fetch(`${service.url}/readyz`).then(async (res) => (await res.arrayBuffer(), res.status === 200)).catch(() => false);
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const restUrl = `${service.url}/v1`;
    const key = merchants.load.key;
    // Every customer's page is open before the clock starts.
    // Pages for 400 payments a second over the whole run: a quiet 2-core machine ran out at 150 (the target with a margin).
    const needed = 400 * (options.warmupSeconds + options.measureSeconds) + options.concurrency;
    const pages: { link: string; opened: OpenedCheckout }[] = [];
    for (let i = 0; i < needed; i += 32) {
      pages.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(32, needed - i) }, async () => {
            const res = await fetch(`${restUrl}/v2/payment-intents`, {
              method: "POST",
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body: JSON.stringify({ amount: 50_000, customerEmail: "ada@example.com", clientReference: `pay-${randomBytes(8).toString("hex")}`, paymentMethod: ["card"], callbackUrl: "https://shop.example.com/paid" }),
            });
            const text = await res.text();
            if (res.status !== 201) throw new Error(`create answered ${res.status}: ${text.slice(0, 200)}`);
            const body = JSON.parse(text) as { checkoutLink: string };
            return { link: body.checkoutLink, opened: await openCheckout(body.checkoutLink) };
          }),
        )),
      );
    }
    // Statistics as autovacuum keeps them on a live database (as bench/run.ts does before every PostgreSQL
    // phase): the service's connections planned their prepared statements while the tables were empty, and
    // with this machine's autovacuum off those generic plans would stay (the token lookup then read every
    // intent of the merchant through (merchant_id, created_at), ~2,000 buffers a call); ANALYZE replans them.
    await queryDatabase(options.databaseUrl, "analyze");
    let next = 0;
    let measuring = false;
    let stop = false;
    const durations: number[] = [];
    let completed = 0;
    let others = 0;
    const customers = Array.from({ length: options.concurrency }, async () => {
      while (!stop && next < pages.length) {
        const page = pages[next++]!;
        const started = performance.now();
        let ok = false;
        try {
          const res = await payByCard(page.link, page.opened, { number: testCards.succeeds });
          ok = res.status === 303 && seeOther(res, service.url).searchParams.get("status") === "successful";
        } catch {
          ok = false;
        }
        // Throughput: payments that complete inside the measured phase, whenever they began.
        if (!measuring) continue;
        if (ok) {
          completed += 1;
          durations.push(performance.now() - started);
        } else {
          others += 1;
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, options.warmupSeconds * 1000));
    // Again once the warm-up has written attempts and events, whose tables were empty at the first.
    await queryDatabase(options.databaseUrl, "analyze");
    const meter = await createDatabaseCpuMeter({ adminUrl: options.adminUrl, databaseName: options.databaseName });
    const serviceBefore = cpuTicks(service.pid) ?? 0;
    const databaseBefore = await meter.sample(service.pid);
    const walBefore = await meter.walBytes();
    const statementsBefore = meter.statements.unavailable ? undefined : await meter.statements.snapshot();
    const tablesBefore = await readTableCounters(options.databaseUrl);
    measuring = true;
    const from = performance.now();
    const pool = { busy: 0, waiting: 0, samples: 0 };
    const sampling = (async () => {
      while (measuring) {
        const text = await fetch(`${service.url}/metrics`).then((res) => res.text()).catch(() => "");
        const gauge = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN);
        const busy = gauge(/^payments_database_pool_connections\{state="busy"\} (\d+)/m);
        const waiting = gauge(/^payments_database_pool_waiting (\d+)/m);
        if (Number.isFinite(busy) && Number.isFinite(waiting)) {
          pool.busy += busy;
          pool.waiting += waiting;
          pool.samples += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, options.measureSeconds * 1000));
    measuring = false;
    await sampling;
    const seconds = (performance.now() - from) / 1000;
    const serviceTicks = (cpuTicks(service.pid) ?? 0) - serviceBefore;
    const databaseTicks = backendTicksSpent(databaseBefore, await meter.sample(service.pid));
    const walAfter = await meter.walBytes();
    const tablesAfter = await readTableCounters(options.databaseUrl);
    const statements = statementsBefore && statementFigures(statementsBefore, await meter.statements.snapshot(), Math.max(1, completed));
    await meter.close();
    stop = true;
    await Promise.all(customers);
    if (next >= pages.length) throw new Error("the bench ran out of opened checkout pages: raise the margin");
    durations.sort((a, b) => a - b);
    const at = (q: number) => durations[Math.min(durations.length - 1, Math.floor(q * durations.length))] ?? 0;
    const tickMs = 1000 / readClockTicksPerSecond();
    return {
      latencyMs: options.latencyMs,
      concurrency: options.concurrency,
      poolMax,
      perSecond: completed / seconds,
      measured: completed,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      others,
      serviceCpuMs: (serviceTicks * tickMs) / Math.max(1, completed),
      databaseCpuMs: (databaseTicks * tickMs) / Math.max(1, completed),
      walBytesPerPayment: statements
        ? statements.reduce((sum, x) => sum + x.walBytesPerRequest, 0)
        : Number(walAfter - walBefore) / Math.max(1, completed),
      walSource: statements ? "statements" : "cluster",
      ...(statements && { statements }),
      tables: tableActivityPer(tablesBefore, tablesAfter, completed),
      serviceCores: (serviceTicks * tickMs) / 1000 / seconds,
      poolBusy: pool.busy / Math.max(1, pool.samples),
      poolWaiting: pool.waiting / Math.max(1, pool.samples),
    };
  } finally {
    await service.stop();
  }
}

/**
 * describeCheckoutPaymentBench is the bench's line for its output and the
 * report: per payment, the service's and the PostgreSQL backends' CPU and
 * the WAL, as the scenarios report them per request (issue 24).
 */
export function describeCheckoutPaymentBench(r: CheckoutPaymentBenchResult): string {
  const us = (msPerPayment: number) => Math.round(msPerPayment * 1000).toLocaleString("en");
  const wal = r.walSource === "statements" ? "its statements'" : "the cluster's, other writers included";
  return `checkout card payments on PostgreSQL, DB_POOL_MAX=${r.poolMax}, TEST_PROCESSOR_LATENCY_MS=${r.latencyMs}, ${r.concurrency} customers at once: ${r.perSecond.toFixed(0)} payments/s per instance (target ≥ 100; ${r.measured} in the measured phase, p50 ${r.p50Ms.toFixed(0)} ms, p99 ${r.p99Ms.toFixed(0)} ms, ${r.others} other answers); per payment: service CPU ${us(r.serviceCpuMs)} µs, PostgreSQL CPU ${us(r.databaseCpuMs)} µs, WAL ${Math.round(r.walBytesPerPayment).toLocaleString("en")} bytes (${wal}); the service used ${(r.serviceCores * 100).toFixed(0)} % of a core; its pool: ${r.poolBusy.toFixed(1)} of ${r.poolMax} connections busy and ${r.poolWaiting.toFixed(0)} calls waiting for one, on average${r.tables ? `; per payment by table: ${describeTableActivity(r.tables)}` : ""}`;
}
