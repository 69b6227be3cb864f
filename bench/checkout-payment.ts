import { randomBytes } from "node:crypto";
import { testCards } from "../src/processor/test-mode-processor.js";
import { openCheckout, payByCard, seeOther, type OpenedCheckout } from "../test/checkout/support/checkout-client.js";
import { merchants, startService } from "./service.js";

export interface CheckoutPaymentBenchOptions {
  databaseUrl: string;
  logPath: string;
  /** TEST_PROCESSOR_LATENCY_MS: every processor call takes this long (the 1000). */
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
  /** Payments completed (303 to the merchant with status=successful) per second in the measured phase. */
  perSecond: number;
  measured: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than a successful payment, in the measured phase. */
  others: number;
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
    const restUrl = `${service.url}/v1`;
    const key = merchants.load.key;
    // Enough pages for the whole run at a generous rate: every customer's page is open before the clock starts.
    const needed = Math.ceil(((options.concurrency * 1000) / options.latencyMs) * (options.warmupSeconds + options.measureSeconds) * 1.5) + options.concurrency;
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
            const body = (await res.json()) as { checkoutLink: string };
            if (res.status !== 201) throw new Error(`create answered ${res.status}`);
            return { link: body.checkoutLink, opened: await openCheckout(body.checkoutLink) };
          }),
        )),
      );
    }
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
        const counted = measuring;
        let ok = false;
        try {
          const res = await payByCard(page.link, page.opened, { number: testCards.succeeds });
          ok = res.status === 303 && seeOther(res, service.url).searchParams.get("status") === "successful";
        } catch {
          ok = false;
        }
        if (!counted || !measuring) continue;
        if (ok) {
          completed += 1;
          durations.push(performance.now() - started);
        } else {
          others += 1;
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, options.warmupSeconds * 1000));
    measuring = true;
    const from = performance.now();
    await new Promise((resolve) => setTimeout(resolve, options.measureSeconds * 1000));
    measuring = false;
    const seconds = (performance.now() - from) / 1000;
    stop = true;
    await Promise.all(customers);
    if (next >= pages.length) throw new Error("the bench ran out of opened checkout pages: raise the margin");
    durations.sort((a, b) => a - b);
    const at = (q: number) => durations[Math.min(durations.length - 1, Math.floor(q * durations.length))] ?? 0;
    return { latencyMs: options.latencyMs, concurrency: options.concurrency, poolMax, perSecond: completed / seconds, measured: completed, p50Ms: at(0.5), p99Ms: at(0.99), others };
  } finally {
    await service.stop();
  }
}

/** describeCheckoutPaymentBench is the bench's line for its output and docs/BENCHMARKS.md. */
export function describeCheckoutPaymentBench(r: CheckoutPaymentBenchResult): string {
  return `checkout card payments on PostgreSQL, DB_POOL_MAX=${r.poolMax}, TEST_PROCESSOR_LATENCY_MS=${r.latencyMs}, ${r.concurrency} customers at once: ${r.perSecond.toFixed(0)} payments/s per instance (target ≥ 100; ${r.measured} in the measured phase, p50 ${r.p50Ms.toFixed(0)} ms, p99 ${r.p99Ms.toFixed(0)} ms, ${r.others} other answers)`;
}
