import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { AttemptOutcome, PaymentProcessor } from "../src/processor/payment-processor.js";
import { createTestModeProcessor, testCards, type TestModeProcessor } from "../src/processor/test-mode-processor.js";
import { chargesInJournal } from "../src/processor/test-processor-journal.js";
import { openCheckout, payByCard, confirm, type OpenedCheckout } from "../test/checkout/support/checkout-client.js";
import { createTestDatabase, queryDatabase } from "../test/support/postgres.js";
import { startServerProcess, type ServerProcess } from "../test/support/server-process.js";
import { startTestServer, type TestServer } from "../test/support/test-server.js";
import type { DrillReport } from "./support/drill-report.js";
import { drillServerEnv, newDrillKey } from "./support/process-target.js";

/** One attempt as the database holds it. */
interface AttemptRow {
  id: string;
  payment_intent_id: string;
  outcome: string;
  processor_reference: string | null;
}

/** An intent ready to pay: its id and its opened checkout page. */
interface Payable {
  id: string;
  checkoutLink: string;
  opened: OpenedCheckout;
}

/** What a customer does for payment i: mostly good cards, some declined, some timing out, some bank transfers. */
function payOne(intent: Payable, i: number) {
  const kind = i % 10;
  if (kind >= 8) return confirm(intent.checkoutLink, intent.opened, "bank_transfer");
  const number = kind === 6 ? testCards.declined : kind === 7 ? testCards.timesOut : testCards.succeeds;
  return payByCard(intent.checkoutLink, intent.opened, { number });
}

/** Creates n intents (card and bank transfer) over REST and opens their checkout pages. */
async function payables(restUrl: string, key: string, n: number): Promise<Payable[]> {
  const made: Payable[] = [];
  for (let i = 0; i < n; i += 16) {
    made.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(16, n - i) }, async (_, j) => {
          const res = await fetch(`${restUrl}/v2/payment-intents`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ amount: 10_000 + i + j, customerEmail: "ada@example.com", clientReference: `pay-${i + j}-${randomBytes(4).toString("hex")}`, paymentMethod: ["card", "bank_transfer"] }),
          });
          const body = (await res.json()) as { id: string; checkoutLink: string };
          if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(body)}`);
          return { id: body.id, checkoutLink: body.checkoutLink, opened: await openCheckout(body.checkoutLink) };
        }),
      )),
    );
  }
  return made;
}

/**
 * The money check of a run: the processor's charges (per attempt key)
 * against the attempts and intents stored. Lost: an attempt left open, or
 * money taken for an attempt not recorded as succeeded; twice: a key charged
 * more than once, or an intent paid by two attempts; phantom: an attempt
 * succeeded that the processor never charged.
 */
function moneyCheck(attempts: AttemptRow[], intents: { id: string; status: string; transaction: string | null }[], charges: ReadonlyMap<string, number>) {
  const byId = new Map(attempts.map((a) => [a.id, a]));
  const open = attempts.filter((a) => a.outcome === "processing" || a.outcome === "requires_action");
  const chargedNotPaid = [...charges.keys()].filter((key) => byId.get(key)?.outcome !== "succeeded");
  const twice = [...charges].filter(([, n]) => n > 1).map(([key]) => key);
  const phantom = attempts.filter((a) => a.outcome === "succeeded" && !charges.has(a.id)).map((a) => a.id);
  const succeededPerIntent = new Map<string, AttemptRow[]>();
  for (const a of attempts.filter((x) => x.outcome === "succeeded")) succeededPerIntent.set(a.payment_intent_id, [...(succeededPerIntent.get(a.payment_intent_id) ?? []), a]);
  const paidTwice = [...succeededPerIntent].filter(([, list]) => list.length > 1).map(([id]) => id);
  const inconsistent = intents.filter((intent) => {
    const paid = succeededPerIntent.get(intent.id)?.[0];
    return paid ? intent.status !== "successful" || intent.transaction !== paid.processor_reference : intent.status === "successful";
  });
  const problems = [
    ...open.slice(0, 3).map((a) => `attempt ${a.id} still ${a.outcome}`),
    ...chargedNotPaid.slice(0, 3).map((key) => `charged but not succeeded: ${key} (${byId.get(key)?.outcome ?? "no attempt"})`),
    ...twice.slice(0, 3).map((key) => `charged twice: ${key}`),
    ...phantom.slice(0, 3).map((id) => `succeeded without a charge: ${id}`),
    ...paidTwice.slice(0, 3).map((id) => `intent paid by two attempts: ${id}`),
    ...inconsistent.slice(0, 3).map((i) => `intent ${i.id} is ${i.status} (transaction ${i.transaction})`),
  ];
  return {
    open: open.length,
    lost: open.length + chargedNotPaid.length,
    twice: twice.length + paidTwice.length,
    phantom: phantom.length,
    inconsistent: inconsistent.length,
    succeeded: attempts.filter((a) => a.outcome === "succeeded").length,
    declined: attempts.filter((a) => a.outcome === "declined").length,
    charged: charges.size,
    problems,
  };
}

export interface PaymentKillOptions {
  /** Intents paid (one attempt each), this many at once. */
  payments: number;
  concurrency: number;
  /** When the server is killed, after the payments start. */
  killAfterMs: number;
  /** TEST_PROCESSOR_LATENCY_MS: every processor call takes this long, so attempts are in flight at the kill. */
  latencyMs: number;
  /** How long the settlement after the restart may take. */
  settleWithinMs: number;
}

/**
 * runPaymentKill (issue 19, kill -9 between begin and outcome under load): a
 * server process on a fresh PostgreSQL database with a slow test processor
 * whose charges are journaled to a file (TEST_PROCESSOR_JOURNAL, so the
 * count survives the kill). Customers pay through the checkout pages at
 * once (good cards, declines, cards that time out, bank transfers); the
 * server is killed with SIGKILL mid-load and restarted on the same
 * database and journal. It passes when, after the reconciler (and the
 * transfers' webhooks) have run, no attempt is open, every charge is a
 * succeeded attempt and every succeeded attempt one charge (0 lost), no key
 * was charged twice and no intent paid twice, and every intent's status
 * agrees with its attempts.
 */
export async function runPaymentKill(options: PaymentKillOptions): Promise<DrillReport> {
  const db = await createTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), "drill-payment-kill-"));
  const journal = join(dir, "test-processor.jsonl");
  const merchant = { id: "payer", key: newDrillKey() };
  const env = {
    ...drillServerEnv,
    TEST_PROCESSOR_LATENCY_MS: String(options.latencyMs),
    TEST_PROCESSOR_JOURNAL: journal,
    TEST_PROCESSOR_WEBHOOK_DELAY_MS: "1000",
    PROCESSOR_TIMEOUT_MS: "3000",
    RECONCILE_INTERVAL_MS: "500",
    CHECKOUT_SECRET: randomBytes(32).toString("base64url"),
    PAGE_TOKEN_SECRET: randomBytes(32).toString("base64url"),
  };
  const servers: ServerProcess[] = [];
  const start = async () => {
    // A loaded machine starts a process slowly; the drill is about what happens after.
    const server = await startServerProcess({ databaseUrl: db.url, apiKeys: `${merchant.id}:${merchant.key}`, env, startTimeoutMs: 60_000 });
    servers.push(server);
    return server;
  };
  const attemptsOf = async () =>
    (await queryDatabase<AttemptRow>(db.url, "select id, payment_intent_id, outcome, processor_reference from payment_attempts where merchant_id = $1", [merchant.id])).rows;
  try {
    const first = await start();
    const intents = await payables(`${first.url}/v1`, merchant.key, options.payments);
    let answered = 0;
    let failed = 0;
    let next = 0;
    const started = performance.now();
    const workers = Array.from({ length: options.concurrency }, async () => {
      while (next < intents.length) {
        const i = next++;
        try {
          const res = await payOne(intents[i]!, i);
          if (res.status === 303) answered += 1;
          else failed += 1;
        } catch {
          failed += 1; // the connection died with the server
        }
      }
    });
    await sleep(options.killAfterMs);
    first.child.kill("SIGKILL");
    await first.exited;
    await Promise.all(workers);
    const killedAt = performance.now();
    const atKill = await attemptsOf();
    const openAtKill = atKill.filter((a) => a.outcome === "processing" || a.outcome === "requires_action").length;
    const chargedAtKill = chargesInJournal(journal).size;

    await start();
    const restartedAt = performance.now();
    let attempts = atKill;
    while (performance.now() - restartedAt < options.settleWithinMs) {
      attempts = await attemptsOf();
      if (attempts.every((a) => a.outcome !== "processing" && a.outcome !== "requires_action")) break;
      await sleep(250);
    }
    const settledMs = performance.now() - restartedAt;
    const stored = (await queryDatabase<{ id: string; status: string; transaction: string | null }>(db.url, "select id, status, transaction from payment_intents where merchant_id = $1", [merchant.id])).rows;
    const check = moneyCheck(attempts, stored, chargesInJournal(journal));
    const passed = atKill.length > 0 && openAtKill > 0 && check.lost === 0 && check.twice === 0 && check.phantom === 0 && check.inconsistent === 0;
    return {
      name: "Payments: kill -9 between begin and outcome",
      did: `${options.payments} checkout payments, ${options.concurrency} at once (6 in 10 good cards, 1 declined, 1 timing out with the money taken, 2 bank transfers), through a server process on PostgreSQL with a ${options.latencyMs} ms test processor whose charges are journaled to a file; SIGKILL ${options.killAfterMs} ms into the load, restart on the same database and journal (PROCESSOR_TIMEOUT_MS=3000, RECONCILE_INTERVAL_MS=500)`,
      headline: `${atKill.length} attempts begun before the kill, ${openAtKill} open at the kill; after the restart ${check.open} open, ${check.lost} lost, ${check.twice} charged twice, ${check.phantom} paid without a charge`,
      figures: [
        `before the kill (${((killedAt - started) / 1000).toFixed(1)} s): ${answered} payments answered, ${failed} cut off or refused; ${chargedAtKill} charges in the journal`,
        `after the restart: every attempt settled in ${(settledMs / 1000).toFixed(1)} s (the reconciler's first check comes PROCESSOR_TIMEOUT_MS + 30 s after an attempt began): ${check.succeeded} succeeded, ${check.declined} declined; ${check.charged} charges, each a succeeded attempt`,
        ...check.problems,
      ],
      passed,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A switch that makes the processor unreachable: during the outage nothing answers before the caller's deadline. */
interface OutageProcessor extends PaymentProcessor {
  down: boolean;
  /** Attempts the outage swallowed on the way in (never received) and on the way back (charged, answer lost). */
  readonly lostIn: Set<string>;
  readonly lostBack: Set<string>;
}

function withOutage(inner: TestModeProcessor): OutageProcessor {
  const hang = (signal: AbortSignal) => new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
  const unknown: AttemptOutcome = { kind: "unknown", reason: "the processor is down (drill)" };
  let n = 0;
  const processor: OutageProcessor = {
    down: false,
    lostIn: new Set(),
    lostBack: new Set(),
    name: inner.name,
    testMode: true,
    handles: (method) => inner.handles(method),
    instructions: (intent, method) => inner.instructions(intent, method),
    async begin(request, signal) {
      if (!processor.down) return inner.begin(request, signal);
      // Half the requests never arrive; the other half are taken and their answer lost.
      if (n++ % 2 === 0) {
        processor.lostIn.add(request.idempotencyKey);
      } else {
        processor.lostBack.add(request.idempotencyKey);
        await inner.begin(request, AbortSignal.timeout(60_000));
      }
      await hang(signal);
      return unknown;
    },
    async status(ref, signal) {
      if (!processor.down) return inner.status(ref, signal);
      await hang(signal);
      return unknown;
    },
    parseWebhook: (headers, body) => inner.parseWebhook(headers, body),
    refund: (request, signal) => inner.refund(request, signal),
    refundStatus: (ref, signal) => inner.refundStatus(ref, signal),
  };
  return processor;
}

export interface ProcessorOutageOptions {
  outageMs: number;
  /** Checkout payments started per second during the outage. */
  paymentsPerSecond: number;
  settleWithinMs: number;
}

/**
 * runProcessorOutage (issue 19): the service on PostgreSQL (in this
 * process, so the drill holds the processor's switch) pays through a test
 * processor that stops answering for outageMs: half the payments made
 * during it never reach the processor, half are charged and their answer
 * lost. Every attempt begun during the outage must stay processing for all
 * of it (no guess), and all must settle after it: the charged ones
 * succeeded, the others declined ("never received"), none charged twice.
 */
export async function runProcessorOutage(options: ProcessorOutageOptions): Promise<DrillReport> {
  const inner = createTestModeProcessor({ webhookDelayMs: 3_600_000 });
  const processor = withOutage(inner);
  const db = await createTestDatabase();
  let server: TestServer | undefined;
  try {
    server = await startTestServer({ databaseUrl: db.url, processor, processorTimeoutMs: 2000, settings: { RECONCILE_INTERVAL_MS: "500" } });
    const count = Math.max(2, Math.round((options.outageMs / 1000) * options.paymentsPerSecond));
    const intents = await payables(server.restUrl, server.keys.merchantA!, count);
    processor.down = true;
    const outageStarted = performance.now();
    const paying: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++) {
      paying.push(payByCard(intents[i]!.checkoutLink, intents[i]!.opened, { number: testCards.succeeds }).catch(() => undefined));
      await sleep(Math.min(1000 / options.paymentsPerSecond, Math.max(0, options.outageMs - 3000) / count));
    }
    await Promise.all(paying);
    const rest = options.outageMs - (performance.now() - outageStarted);
    if (rest > 0) await sleep(rest);
    const attemptsOf = async () =>
      (await queryDatabase<AttemptRow>(db.url, "select id, payment_intent_id, outcome, processor_reference from payment_attempts where merchant_id = 'merchantA'")).rows;
    const atEnd = await attemptsOf();
    const openAtEnd = atEnd.filter((a) => a.outcome === "processing").length;
    processor.down = false;
    const upAt = performance.now();
    let attempts = atEnd;
    while (performance.now() - upAt < options.settleWithinMs) {
      attempts = await attemptsOf();
      if (attempts.every((a) => a.outcome !== "processing")) break;
      await sleep(250);
    }
    const settledMs = performance.now() - upAt;
    const stored = (await queryDatabase<{ id: string; status: string; transaction: string | null }>(db.url, "select id, status, transaction from payment_intents where merchant_id = 'merchantA'")).rows;
    const check = moneyCheck(attempts, stored, inner.charges());
    const byId = new Map(attempts.map((a) => [a.id, a.outcome]));
    const wrongWay = [...processor.lostBack].filter((k) => byId.get(k) !== "succeeded").length + [...processor.lostIn].filter((k) => byId.get(k) !== "declined").length;
    const passed = atEnd.length === count && openAtEnd === count && check.lost === 0 && check.twice === 0 && check.phantom === 0 && check.inconsistent === 0 && wrongWay === 0;
    return {
      name: "Payments: processor outage",
      did: `the service on PostgreSQL (in the drill's process, PROCESSOR_TIMEOUT_MS=2000, RECONCILE_INTERVAL_MS=500) and a test processor that answers nothing for ${(options.outageMs / 1000).toFixed(0)} s; ${count} card payments during it, half never reaching the processor, half charged with their answer lost; then the processor is back`,
      headline: `${openAtEnd}/${count} attempts processing at the end of the outage; ${(settledMs / 1000).toFixed(1)} s after it all settled: ${check.succeeded} succeeded (the charged ones), ${check.declined} declined (never received), ${check.lost} lost, ${check.twice} charged twice`,
      figures: [
        `${processor.lostBack.size} charged during the outage, ${processor.lostIn.size} never received; ${wrongWay} settled the wrong way`,
        `an attempt's first reconciliation comes PROCESSOR_TIMEOUT_MS + 30 s after it began, then every 30 s in its first 5 minutes: what settles them after an outage`,
        ...check.problems,
      ],
      passed,
    };
  } finally {
    await server?.close();
    inner.close();
    await db.drop();
  }
}

export interface ProcessorWebhookStormOptions {
  /** Attempts left processing (bank transfers whose money has not arrived), then notified. */
  attempts: number;
  /** Copies of each attempt's final notice, sent at once in random order. */
  copies: number;
}

/**
 * runProcessorWebhookStorm (issue 19): bank transfers left processing, then
 * the processor's notices about them sent to POST /processor-webhooks/test
 * all at once in random order: each attempt's final outcome (3 in 4
 * succeeded, 1 in 4 declined) `copies` times, with a stale "pending" notice
 * among them; then, once every outcome is committed, a late contrary notice
 * for each (a failure after a success, a success after a failure) and
 * another copy. Once on the memory stores and once on PostgreSQL. Passes
 * when every answer is 200, each intent changed exactly once (one event
 * for its outcome), its status is its attempt's outcome, and the late
 * notices changed nothing.
 */
export async function runProcessorWebhookStorm(options: ProcessorWebhookStormOptions): Promise<DrillReport> {
  const rows: string[] = [];
  const problems: string[] = [];
  let passed = true;
  const headlines: string[] = [];
  for (const store of ["memory", "postgres"] as const) {
    const processor = createTestModeProcessor({ webhookDelayMs: 3_600_000 });
    const server = await startTestServer({ store, processor });
    try {
      const restUrl = server.restUrl;
      const key = server.keys.merchantA!;
      const intents = await payables(restUrl, key, options.attempts);
      await Promise.all(intents.map((intent) => confirm(intent.checkoutLink, intent.opened, "bank_transfer")));
      const attempts = (await Promise.all(intents.map((intent) => server.intents.listAttempts("merchantA", intent.id)))).map((list) => list[0]!);
      const truth = new Map(attempts.map((a, i) => [a.id, i % 4 === 3 ? "declined" : "succeeded"]));
      const outcomeOf = (id: string, kind: string, reference: string, amount: bigint): AttemptOutcome =>
        kind === "succeeded"
          ? { kind: "succeeded", reference, amount, currency: "NGN" }
          : kind === "declined"
            ? { kind: "declined", reference, reason: `drill ${id}` }
            : { kind: "pending", reference };
      const notice = (a: (typeof attempts)[number], kind: string) =>
        processor.signNotice({ kind: "attempt", noticeId: `evt_${randomBytes(6).toString("hex")}`, idempotencyKey: a.id, outcome: outcomeOf(a.id, kind, a.processorReference!, a.amount) });
      const post = async (signed: { headers: Record<string, string>; body: string }) => {
        const res = await fetch(`${server.url}/processor-webhooks/test`, { method: "POST", headers: signed.headers, body: signed.body });
        await res.arrayBuffer();
        return res.status;
      };
      const shuffle = <T>(list: T[]) => list.map((v) => [Math.random(), v] as const).sort((x, y) => x[0] - y[0]).map(([, v]) => v);
      const first = shuffle(attempts.flatMap((a) => [...Array.from({ length: options.copies }, () => notice(a, truth.get(a.id)!)), notice(a, "pending")]));
      const started = performance.now();
      const firstStatuses = await Promise.all(first.map(post));
      const firstMs = performance.now() - started;
      const after = await Promise.all(intents.map(async (intent) => (await server.intents.findById("merchantA", intent.id))!));
      const late = shuffle(attempts.flatMap((a) => [notice(a, truth.get(a.id) === "succeeded" ? "declined" : "succeeded"), notice(a, truth.get(a.id)!)]));
      const lateStatuses = await Promise.all(late.map(post));
      const final = await Promise.all(intents.map(async (intent) => (await server.intents.findById("merchantA", intent.id))!));
      const events = await Promise.all(
        intents.map(async (intent) => (await server.recordedWebhooks.events.list({ merchantId: "merchantA", livemode: false, limit: 20, paymentIntentId: intent.id })).map((e) => e.type)),
      );
      const non200 = [...firstStatuses, ...lateStatuses].filter((s) => s !== 200).length;
      const wrong = final.filter((intent, i) => intent.status !== (truth.get(attempts[i]!.id) === "succeeded" ? "successful" : "pending")).length;
      const changedLate = final.filter((intent, i) => intent.updatedAt.getTime() !== after[i]!.updatedAt.getTime() || intent.status !== after[i]!.status).length;
      const outcomeEvents = events.map((types) => types.filter((t) => t === "payment_intent.succeeded" || t === "payment_intent.payment_failed").length);
      const notOnce = outcomeEvents.filter((n) => n !== 1).length;
      const ok = non200 === 0 && wrong === 0 && changedLate === 0 && notOnce === 0;
      passed &&= ok;
      if (non200) problems.push(`${store}: ${non200} notices answered other than 200`);
      if (wrong) problems.push(`${store}: ${wrong} intents not in their attempt's outcome`);
      if (changedLate) problems.push(`${store}: ${changedLate} intents changed by a late notice`);
      if (notOnce) problems.push(`${store}: ${notOnce} intents without exactly one outcome event`);
      headlines.push(`${store}: ${first.length + late.length} notices, ${non200} not 200, ${notOnce} intents changed other than once, ${changedLate} changed late`);
      rows.push(
        `| ${store} | ${options.attempts} | ${first.length} | ${late.length} | ${non200} | ${attempts.length - notOnce} | ${changedLate} | ${((first.length / firstMs) * 1000).toFixed(0)} | ${ok ? "yes" : "NO"} |`,
      );
    } finally {
      await server.close();
      processor.close();
    }
  }
  return {
    name: "Payments: duplicate and reordered processor webhooks",
    did: `${options.attempts} bank transfers left processing, then their processor notices POSTed to /processor-webhooks/test at once in random order (each final outcome ${options.copies} times, 3 in 4 succeeded and 1 in 4 declined, and a stale pending one), then a late contrary notice (a failure after a success, a success after a failure) and one more copy of each; on the memory stores, then PostgreSQL`,
    headline: headlines.join("; "),
    figures: problems.length > 0 ? problems : ["every notice 200, every intent changed once and stayed as its first final notice left it"],
    table: ["| Store | attempts | notices at once | late notices | not 200 | changed exactly once | changed by a late notice | notices/s | held |", "|---|---|---|---|---|---|---|---|---|", ...rows],
    passed,
  };
}
