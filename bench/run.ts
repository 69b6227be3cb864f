/**
 * npm run bench [-- --quick] [-- --profile] [-- --only <regex>] [-- --no-write] [-- --rounds N] [-- --baseline <checkout>]
 *
 * Starts every scenario's process once (the service on a free port, in memory
 * and on a fresh PostgreSQL database, and the reference servers the issue
 * compares against), then runs R rounds in which every scenario is loaded in
 * turn (A B C … A B C …), reading each process's CPU from /proc around each
 * measured phase. Prints the table of medians and the targets, and (full runs
 * of every scenario only) rewrites the results section of docs/BENCHMARKS.md
 * and bench/results/last-full-run.json, which the next run's regression check
 * compares against. --profile runs our servers under --cpu-prof and prints
 * where their time went during the measured phases. --baseline <checkout>
 * runs each of our selected scenarios a second time from another checkout
 * (`<id>-baseline`, right after its own in every round), so a change and
 * what it changes are measured in alternation on the same machine and
 * database; such a run never writes the record. --built runs our servers
 * from their dist/ build (npm run build first), as the image does, rather
 * than src/ under the tsx loader. The webhook delivery
 * bench (bench/webhooks.ts) runs in full runs and alone with --only webhooks;
 * the checkout payment bench (bench/checkout-payment.ts: card payments with
 * TEST_PROCESSOR_LATENCY_MS=1000 on PostgreSQL and the default pool) in full
 * runs and alone with --only checkout-payment; its figures (CPU and WAL per
 * payment, as the scenarios') are part of the report, its rate a target.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { adminUrl, createTestDatabase, postgresUnavailable, queryDatabase, type TestDatabase } from "../test/support/postgres.js";
import { runListScale, type ScalePoint } from "./list-scale.js";
import {
  readRecord,
  recordOf,
  renderReport,
  summarize,
  targetsOf,
  writeRecord,
  writeReport,
  type BenchReport,
  type ScenarioResult,
} from "./report.js";
import { createScenarios, type Scenario } from "./scenarios.js";
import { merchants, pageTokenSecret, restCreateBody, startService } from "./service.js";
import { runSoak, type SoakResult } from "./soak.js";
import { runStartupBench } from "./startup.js";
import { repoRoot } from "./support/bench-process.js";
import { formatProfileSummary, summarizeCpuProfile, type ProfileWindow } from "./support/cpu-profile.js";
import { createDatabaseCpuMeter } from "./support/database-cpu.js";
import { unexpectedOutcomes, type LoadResult } from "./support/load-result.js";
import { describeMachine } from "./support/machine.js";
import { measurePhase, type MeasureOptions, type Measurement, type Subject } from "./support/measure.js";
import { readClockTicksPerSecond } from "./support/proc-stat.js";
import { runWrk, wrkVersion } from "./support/wrk.js";
import { describeWebhookBench, runWebhookBench, type WebhookBenchResult } from "./webhooks.js";
import { describeCheckoutPaymentBench, runCheckoutPaymentBench, type CheckoutPaymentBenchResult } from "./checkout-payment.js";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    only: { type: "string" },
    "no-write": { type: "boolean", default: false },
    rounds: { type: "string" },
    /** A checkout of another commit (e.g. a `git worktree` of main): each of our scenarios selected also runs it, alternating with this one. */
    baseline: { type: "string" },
    /** Our servers run their dist/ build (npm run build first; a --baseline checkout's too), as the image does. */
    built: { type: "boolean", default: false },
    /** With --only webhooks: a checkout of another commit (e.g. `git archive main`), run in alternation with this one. */
    "webhook-baseline": { type: "string" },
  },
});

const quick = flags.quick!;
const connections = 50;
const grpcConnections = 5;
const rounds = flags.rounds ? Number(flags.rounds) : flags.profile ? 1 : quick ? 2 : 5;
const warmupSeconds = quick ? 1 : 5;
const rewarmSeconds = 1;
const measureSeconds = quick ? 3 : 6;
/** Ticks a measured phase aims for (1 % of 100 ticks is one tick; the margin is for a busier moment than the warm-up's). */
const targetTicks = 150;
/** Under this many ticks a phase is measured again, for longer (a tick is then over 1 % of the figure). */
const minimumTicks = 100;
/** A phase is lengthened to reach targetTicks, up to this many times measureSeconds. */
const maxPhaseFactor = 3;

/** lengthFor is how long a scenario's next phase must be to count targetTicks at the rate of the phase just measured. */
function lengthFor(m: Measurement): number {
  const ticksPerSecondOfLoad = m.cpuTicks / m.result.seconds;
  const needed = Math.ceil(targetTicks / Math.max(ticksPerSecondOfLoad, 1e-3));
  return Math.min(maxPhaseFactor * measureSeconds, Math.max(measureSeconds, needed));
}
const scaleSizes = quick ? [10_000, 100_000] : [10_000, 1_000_000];
const scaleRequests = quick ? 50 : 300;
const soakSeconds = quick ? 10 : 60;
const soakWarmupSeconds = quick ? 5 : 20;
const webhookSeconds = quick ? 5 : 10;
const listSeed = 1000;
const only = flags.only ? new RegExp(flags.only) : undefined;
const recordPath = join(repoRoot, "bench", "results", "last-full-run.json");

const began = performance.now();
const log = (line: string) => process.stdout.write(`# [${Math.round((performance.now() - began) / 1000)} s] ${line}\n`);

if (!Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write(`--rounds must be a positive integer, not ${flags.rounds}\n`);
  process.exit(1);
}
const wrk = wrkVersion();
if (!wrk) {
  process.stderr.write("wrk is not installed. Install it with: apt-get install -y wrk\n");
  process.exit(1);
}
const unavailable = await postgresUnavailable();
if (unavailable) {
  process.stderr.write(
    `${unavailable}\nThe PostgreSQL scenarios need a server: set TEST_DATABASE_URL, or start one on 127.0.0.1:5432 (trust auth for postgres).\n`,
  );
  process.exit(1);
}

const ticksPerSecond = readClockTicksPerSecond();
const db: TestDatabase = await createTestDatabase();
const logDir = mkdtempSync(join(tmpdir(), "bench-logs-"));
const profileDir = flags.profile ? mkdtempSync(join(tmpdir(), "bench-profiles-")) : undefined;
const meter = await createDatabaseCpuMeter({ adminUrl, databaseName: db.name });
if (meter.statements.unavailable) log(`no per-statement breakdown: ${meter.statements.unavailable}`);
const measureOptions: MeasureOptions = { ticksPerSecond, database: meter };
const running: Subject[] = [];
const cleanups: (() => Promise<void>)[] = [
  async () => {
    await Promise.allSettled(running.splice(0).map((s) => s.stop()));
  },
  () => meter.close(),
  async () => db.drop(),
  async () => (process.env.BENCH_KEEP_LOGS ? undefined : rmSync(logDir, { recursive: true, force: true })),
];
process.on("SIGINT", () => {
  void (async () => {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    process.exit(130);
  })();
});

/** runRounds starts every selected scenario, then measures each once per round, in turn. */
async function runRounds(selected: Scenario[]): Promise<{ results: ScenarioResult[]; windows: Map<string, ProfileWindow[]> }> {
  const subjects = new Map<string, Subject>();
  // A few at a time: starting is mostly waiting (module loading, migrations, seeding through the API).
  const queue = [...selected];
  const starter = async () => {
    for (let s = queue.shift(); s; s = queue.shift()) {
      const subject = await s.start();
      running.push(subject);
      subjects.set(s.id, subject);
    }
  };
  await Promise.all(Array.from({ length: 3 }, starter));
  log(`started ${selected.length} processes`);
  const results = new Map<string, ScenarioResult>(
    selected.map((s) => [s.id, { id: s.id, label: s.label, store: s.store, kind: s.kind, rounds: [], peakRssBytes: 0 }]),
  );
  const windows = new Map<string, ProfileWindow[]>();
  const phaseSeconds = new Map<string, number>();
  for (let round = 1; round <= rounds; round++) {
    for (const s of selected) {
      const subject = subjects.get(s.id)!;
      // Statistics as autovacuum keeps them on a live database: the creates of earlier phases grow the
      // tables by thousands of rows a second, and stale statistics turn the list's index scans into
      // sequential scans (see docs/BENCHMARKS.md).
      if (s.store === "PostgreSQL") await queryDatabase(db.url, "analyze");
      let warm: LoadResult;
      if (round === 1) {
        // The first warm-up also tells how fast the process spends CPU under this load, so its measured
        // phases can be made long enough for a tick to stay under 1 % of the figure.
        const w = await measurePhase(subject, `${s.id}-warm`, warmupSeconds, measureOptions);
        warm = w.result;
        phaseSeconds.set(s.id, lengthFor(w));
      } else {
        warm = await subject.drive(`${s.id}-r${round}-warm`, rewarmSeconds);
      }
      let seconds = phaseSeconds.get(s.id)!;
      let m = await measurePhase(subject, `${s.id}-r${round}`, seconds, measureOptions);
      phaseSeconds.set(s.id, lengthFor(m));
      if (m.cpuTicks < minimumTicks && phaseSeconds.get(s.id)! > seconds) {
        // The machine got busier than when the length was set: measure this round again, for longer.
        log(`round ${round}/${rounds} ${s.id}: ${m.cpuTicks} ticks in ${seconds} s, under ${minimumTicks}: measuring again for ${phaseSeconds.get(s.id)} s`);
        seconds = phaseSeconds.get(s.id)!;
        m = await measurePhase(subject, `${s.id}-r${round}-again`, seconds, measureOptions);
        phaseSeconds.set(s.id, lengthFor(m));
      }
      // A scenario answering errors (or, for a create, replays) fast must stop the run, not report a great figure.
      const wrong = unexpectedOutcomes(m.result, s.expected) ?? unexpectedOutcomes(warm, s.expected, false);
      if (wrong) {
        throw new Error(`${s.id}, round ${round}: expected every answer to be ${s.expected}, got ${wrong}\n${subject.stderrTail().slice(-4000)}`);
      }
      results.get(s.id)!.rounds.push(m);
      windows.set(s.id, [...(windows.get(s.id) ?? []), m.window]);
      const dbCpu =
        m.dbUsPerRequest === undefined ? "" : `, DB ${Math.round(m.dbUsPerRequest)} µs/req, WAL ${Math.round(m.walBytesPerRequest ?? NaN)} B/req`;
      const statementTotal = (f: (x: NonNullable<Measurement["statements"]>[number]) => number) =>
        Math.round((m.statements ?? []).reduce((sum, x) => sum + f(x), 0));
      const statements = m.statements
        ? `, statements ${statementTotal((x) => x.execUsPerRequest)} µs exec + ${statementTotal((x) => x.planUsPerRequest)} µs plan + ${statementTotal((x) => x.walBytesPerRequest)} B WAL/req`
        : "";
      const threads = Object.entries(m.threadsUsPerRequest ?? {})
        .map(([name, us]) => `${name} ${us}`)
        .join(", ");
      const generator = m.generatorUsPerRequest === undefined ? "" : `, load generator ${Math.round(m.generatorUsPerRequest)} µs/req`;
      log(
        `round ${round}/${rounds} ${s.id}: ${Math.round(m.cpuUsPerRequest)} µs/req (${m.cpuTicks} ticks in ${seconds} s; by thread: ${threads})${dbCpu}${statements}${generator}, ${Math.round(m.result.rps)} req/s, p50 ${m.result.p50Ms.toFixed(2)} ms, p99 ${m.result.p99Ms.toFixed(2)} ms`,
      );
    }
  }
  for (const s of selected) {
    const subject = subjects.get(s.id)!;
    results.get(s.id)!.peakRssBytes = subject.peakRss();
    await subject.stop();
    running.splice(running.indexOf(subject), 1);
  }
  return { results: [...results.values()], windows };
}

async function runScale(): Promise<ScalePoint[]> {
  const server = await startService({ databaseUrl: db.url, logPath: join(logDir, "scale.log") });
  try {
    return await runListScale({
      databaseUrl: db.url,
      serviceUrl: server.url,
      merchants: [merchants.scaleSmall, merchants.scaleLarge],
      pageTokenSecret,
      sizes: scaleSizes,
      requests: scaleRequests,
      log,
    });
  } finally {
    await server.stop();
  }
}

/**
 * runWebhooks: creates at full speed (and, in full runs, paced at 100 a
 * second, a load that leaves the server idle most of the time) against a
 * server in memory and on PostgreSQL, one endpoint, a local receiver
 * (bench/webhooks.ts).
 */
async function runWebhooks(): Promise<{ results: WebhookBenchResult[]; windows: Map<string, ProfileWindow[]> }> {
  const results: WebhookBenchResult[] = [];
  const windows = new Map<string, ProfileWindow[]>();
  const baseline = flags["webhook-baseline"];
  // With a baseline, both builds in alternation for `rounds` rounds (the order flips each round), so a busy
  // moment of the machine falls on one round, not on one side of the comparison.
  const variantRounds = baseline ? rounds : 1;
  for (const ratePerSecond of quick || baseline ? [undefined] : [undefined, 100]) {
    for (let round = 0; round < variantRounds; round++) {
      const variants: { name: string; root?: string }[] = baseline ? [{ name: "baseline", root: baseline }, { name: "this" }] : [{ name: "this" }];
      if (round % 2 === 1) variants.reverse();
      for (const store of ["memory", "PostgreSQL"] as const) {
        for (const variant of variants) {
          const webhookDb = store === "PostgreSQL" ? await createTestDatabase() : undefined;
          try {
            log(`webhook delivery, ${store}, ${variant.name}, ${ratePerSecond ? `${ratePerSecond} creates/s` : `${connections} connections`} for ${webhookSeconds} s …`);
            const result = await runWebhookBench({
              store,
              databaseUrl: webhookDb?.url,
              connections: ratePerSecond ? 8 : connections,
              ratePerSecond,
              seconds: webhookSeconds,
              logDir,
              drainTimeoutMs: 120_000,
              profileDir,
              root: variant.root,
              variant: variant.name,
            });
            log(describeWebhookBench(result));
            results.push(result);
            const dir = `webhooks-${store}-${variant.name}`;
            windows.set(dir, [...(windows.get(dir) ?? []), result.loadWindow]);
          } finally {
            await webhookDb?.drop();
          }
        }
      }
    }
  }
  if (baseline) {
    const median = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      const mid = (sorted.length - 1) / 2;
      return ((sorted[Math.floor(mid)] ?? NaN) + (sorted[Math.ceil(mid)] ?? NaN)) / 2;
    };
    for (const store of ["memory", "PostgreSQL"] as const) {
      for (const name of ["baseline", "this"]) {
        const of = results.filter((r) => r.store === store && r.variant === name);
        log(
          `${store}, ${name}: median of ${of.length} rounds: main thread ${Math.round(median(of.map((r) => r.cpu.mainThreadUsPerCreate)))} µs/create, process ${Math.round(median(of.map((r) => r.cpu.processUsPerCreate)))} µs/create, ${Math.round(median(of.map((r) => r.createRate)))} creates/s, ${Math.round(median(of.map((r) => r.deliveredRate)))} delivered/s, backlog at the end ${Math.round(median(of.map((r) => r.backlog.end)))}, p99 ${Math.round(median(of.map((r) => r.latency.p99Ms)))} ms`,
        );
      }
    }
  }
  return { results, windows };
}

/** runCheckoutPayment: checkout card payments through a 1 s test processor on PostgreSQL (bench/checkout-payment.ts). */
async function runCheckoutPayment(): Promise<CheckoutPaymentBenchResult> {
  const paymentDb = await createTestDatabase();
  try {
    log("checkout payments, PostgreSQL, TEST_PROCESSOR_LATENCY_MS=1000 …");
    const result = await runCheckoutPaymentBench({
      databaseUrl: paymentDb.url,
      databaseName: paymentDb.name,
      adminUrl,
      logPath: join(logDir, "checkout-payment.log"),
      latencyMs: 1000,
      concurrency: 250,
      warmupSeconds: quick ? 2 : 5,
      measureSeconds: quick ? 5 : 15,
    });
    log(describeCheckoutPaymentBench(result));
    return result;
  } finally {
    await paymentDb.drop();
  }
}

async function runCreateSoak(): Promise<SoakResult> {
  const server = await startService({ databaseUrl: db.url, logPath: join(logDir, "soak.log") });
  const drive = (runId: string, seconds: number) =>
    runWrk({
      url: `${server.url}/v1/v2/payment-intents`,
      method: "POST",
      headers: { authorization: `Bearer ${merchants.load.key}`, "content-type": "application/json" },
      body: restCreateBody,
      connections,
      durationSeconds: seconds,
      runId,
    });
  const subject: Subject = { ...server, drive, usesDatabase: true };
  try {
    // Longer than a scenario's warm-up: the heap grows for the first 15–20 s of load before it settles.
    await drive("soak-warm", soakWarmupSeconds);
    const soak = await runSoak(server, soakSeconds, soakWarmupSeconds, () => measurePhase(subject, "soak-run", soakSeconds, measureOptions));
    const wrong = unexpectedOutcomes(soak.load, "201");
    if (wrong) throw new Error(`soak: expected every answer to be 201, got ${wrong}`);
    return soak;
  } finally {
    await server.stop();
  }
}

/** printProfiles summarises each profiled server's samples inside its measured phases. */
function printProfiles(windows: Map<string, ProfileWindow[]>): void {
  for (const dir of readdirSync(profileDir!).sort()) {
    // The main thread's profile is the largest; the others are the tsx loader's.
    const files = readdirSync(join(profileDir!, dir))
      .filter((f) => f.endsWith(".cpuprofile"))
      .map((f) => join(profileDir!, dir, f))
      .sort((a, b) => statSync(b).size - statSync(a).size);
    if (files[0]) process.stdout.write(`\n${formatProfileSummary(`${dir}, measured phases only`, summarizeCpuProfile(files[0], 25, windows.get(dir)))}\n`);
  }
  log(`CPU profiles (whole process lifetime) in ${profileDir} (open them in Chrome DevTools, Performance tab)`);
}

let exitCode = 0;
const loadAtStart = loadavg();
try {
  const machine = await describeMachine(db.url, wrk);
  log(`machine: ${machine.cores} cores, ${machine.cpuModel}, Node.js ${machine.node}, ${machine.postgres}, ${machine.wrk}, CLK_TCK ${ticksPerSecond}`);
  log(
    `database ${db.name}; ${quick ? "quick run" : "full run"}${flags.profile ? " with --cpu-prof" : ""}; ${rounds} rounds; ${connections} in flight; ${warmupSeconds} s warm-up, then ${rewarmSeconds} s + ${measureSeconds} s measured per scenario and round; logs in ${logDir}`,
  );
  const selected = createScenarios({
    db,
    logDir,
    profileDir,
    connections,
    grpcConnections,
    listSeed,
    built: flags.built,
  })
    .filter((s) => !only || only.test(s.id))
    // Each baseline right after its own scenario: the two alternate within every round.
    .flatMap((s) => (flags.baseline && s.baseline ? [s, s.baseline(flags.baseline)] : [s]));
  // Profiled, the webhook bench runs only when asked for by name (its figures then carry the profiler's cost).
  const webhooksSelected = flags.profile ? only?.test("webhooks") === true : !only || only.test("webhooks");
  const paymentsSelected = !flags.profile && (!only || only.test("checkout-payment"));
  if (selected.length === 0 && !webhooksSelected && !paymentsSelected) throw new Error(`--only ${flags.only} selects no scenario`);

  const { results, windows } = selected.length > 0 ? await runRounds(selected) : { results: [], windows: new Map<string, ProfileWindow[]>() };
  const runExtras = !only && !flags.profile;
  const scale = runExtras ? await runScale() : [];
  if (runExtras) log(`create soak on PostgreSQL for ${soakSeconds} s …`);
  const soak = runExtras ? await runCreateSoak() : undefined;
  if (runExtras) log("the sandbox's start-up, from a packed install …");
  const startup = runExtras ? await runStartupBench({ runs: quick ? 3 : 10, log }) : undefined;
  const webhookRun = webhooksSelected ? await runWebhooks() : undefined;
  const webhooks = webhookRun?.results ?? [];
  for (const [dir, stretch] of webhookRun?.windows ?? []) windows.set(dir, stretch);
  const payments = paymentsSelected ? await runCheckoutPayment() : undefined;

  const full = !quick && !only && !flags.profile && !flags.baseline && !flags.built;
  const report: BenchReport = {
    machine,
    date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC",
    quick,
    profiled: flags.profile!,
    connections,
    grpcConnections,
    rounds,
    warmupSeconds,
    rewarmSeconds,
    measureSeconds,
    ticksPerSecond,
    loadAverage: { start: loadAtStart, end: loadavg() },
    scenarios: results,
    scale,
    soak,
    startup,
    webhooks,
    checkoutPayment: payments,
    // A profiled run carries the profiler's cost: no comparison with the last full run.
    previous: flags.profile ? undefined : readRecord(recordPath),
  };
  const markdown = renderReport(report);
  process.stdout.write(`\n${markdown}\n`);
  if (profileDir) printProfiles(windows);

  const docPath = join(repoRoot, "docs", "BENCHMARKS.md");
  if (full && !flags["no-write"]) {
    writeReport(docPath, markdown);
    writeRecord(recordPath, recordOf(report));
    log(`wrote the results section of ${docPath} and ${recordPath}`);
  } else {
    log(`docs/BENCHMARKS.md left as it is (${flags["no-write"] ? "--no-write" : "only full runs of every scenario write it"})`);
  }
  const coarse = results.filter((r) => summarize(r).minTicks < minimumTicks).map((r) => r.id);
  if (coarse.length > 0) log(`fewer than 100 clock ticks in a phase of: ${coarse.join(", ")} (tick over 1 % of the figure)`);
  const targets = targetsOf(report);
  const missed = targets.filter((t) => t.met === false);
  if (targets.every((t) => t.met === undefined)) log("no target measured by this selection");
  else log(missed.length === 0 ? "every measured target met" : `targets missed: ${missed.map((t) => t.name).join("; ")}`);
} catch (error) {
  process.stderr.write(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  exitCode = 1;
} finally {
  for (const cleanup of cleanups) await cleanup().catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
}
process.exit(exitCode);
