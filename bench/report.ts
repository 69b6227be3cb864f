import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { describeCheckoutPaymentBench, type CheckoutPaymentBenchResult } from "./checkout-payment.js";
import type { ScalePoint } from "./list-scale.js";
import type { SoakResult } from "./soak.js";
import { renderStartup, startupTargets, type StartupResult } from "./startup.js";
import type { Measurement } from "./support/measure.js";
import type { Machine } from "./support/machine.js";
import { mergeFigures, type StatementFigure } from "./support/statement-stats.js";
import { median, spread, type Spread } from "./support/stats.js";
import { describeWebhookBench, keepsUp, webhookTargets, type WebhookBenchResult } from "./webhooks.js";

/** Every round of one scenario. */
export interface ScenarioResult {
  /** Stable key the targets refer to, e.g. "rest-create-memory". */
  id: string;
  label: string;
  store: string;
  kind: "ours" | "reference";
  rounds: Measurement[];
  peakRssBytes: number;
}

export interface BenchReport {
  machine: Machine;
  date: string;
  quick: boolean;
  /** Our servers ran under --cpu-prof: their figures carry the profiler's cost. */
  profiled: boolean;
  connections: number;
  grpcConnections: number;
  rounds: number;
  warmupSeconds: number;
  rewarmSeconds: number;
  measureSeconds: number;
  ticksPerSecond: number;
  /** The machine's 1, 5 and 15 minute load averages when the run began and ended: how busy others kept it. */
  loadAverage: { start: number[]; end: number[] };
  scenarios: ScenarioResult[];
  scale: ScalePoint[];
  soak?: SoakResult;
  /** The sandbox's start-up (bench/startup.ts). */
  startup?: StartupResult;
  /** Webhook delivery under creates (bench/webhooks.ts); empty when not run. */
  webhooks?: WebhookBenchResult[];
  /** Checkout card payments on PostgreSQL (bench/checkout-payment.ts), when run. */
  checkoutPayment?: CheckoutPaymentBenchResult;
  /** The last full run's record, for the regression check. */
  previous?: RunRecord;
}

/** One scenario's figures over the rounds. */
export interface Summary {
  cpu: Spread;
  rps: number;
  p50Ms: number;
  p99: Spread;
  db: Spread;
  /** WAL bytes per request, median over the rounds: its statements' (pg_stat_statements) when read, else the cluster's. */
  walBytes: number;
  generatorUs: number;
  /** The fewest clock ticks any round measured: the figure's resolution. */
  minTicks: number;
  requests: number;
}

export function summarize(s: ScenarioResult): Summary {
  const m = s.rounds;
  return {
    cpu: spread(m.map((r) => r.cpuUsPerRequest)),
    rps: median(m.map((r) => r.result.rps)),
    p50Ms: median(m.map((r) => r.result.p50Ms)),
    p99: spread(m.map((r) => r.result.p99Ms)),
    db: spread(m.map((r) => r.dbUsPerRequest ?? NaN)),
    // The database's own statements' WAL when pg_stat_statements is loaded: the cluster's LSN also counts whatever else writes to it.
    walBytes: median(
      m.map((r) => (r.statements ? r.statements.reduce((sum, x) => sum + x.walBytesPerRequest, 0) : (r.walBytesPerRequest ?? NaN))),
    ),
    generatorUs: median(m.map((r) => r.generatorUsPerRequest ?? NaN)),
    minTicks: Math.min(...m.map((r) => r.cpuTicks)),
    requests: m.reduce((sum, r) => sum + r.result.requests, 0),
  };
}

/** A target of the issue, judged on one run's medians. */
export interface Target {
  name: string;
  /** The measured figure, e.g. "0.21× (312 vs 66 µs/request)". */
  figure: string;
  /** The target as the issue states it, e.g. "≥ 0.5×". */
  goal: string;
  met: boolean | undefined;
}

/** What a full run leaves behind for the next one's regression check (bench/results/last-full-run.json). */
export interface RunRecord {
  date: string;
  /** CPU µs per request of every scenario over the rounds. */
  cpuUsPerRequest: Record<string, Spread>;
  /** PostgreSQL backends' CPU µs per request of the PostgreSQL scenarios (absent in records before issue 24). */
  dbUsPerRequest?: Record<string, Spread>;
}

/**
 * A scenario of ours regressed when its median CPU per request grew by more
 * than this against the last full run, after both are scaled by how much the
 * machine itself changed (see machineFactors), and even its fastest round
 * was slower than the last run's slowest (the ranges do not overlap): on a
 * shared machine two runs of the same code differ by up to ~20 % in their
 * medians, not by disjoint ranges.
 */
export const regressionTolerance = 0.15;

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "–");
const us = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString("en") : "–");
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "–");
const load = (averages: number[]) => averages.map((a) => a.toFixed(1)).join(" / ");
const range = (s: Spread) => (Number.isFinite(s.median) ? `${us(s.median)} [${us(s.min)}–${us(s.max)}]` : "–");

/** The bench's one resolution rule: a tick (10 ms) must be under 1 % of the CPU a phase measures. */
const minimumTicks = 100;

function scenarioTable(report: BenchReport): string {
  return [
    "| Scenario | Store | CPU µs/request, median [min–max] | Requests/s | p50 ms | p99 ms | DB CPU µs/request | WAL bytes/request | Load generator µs/request | Peak RSS MiB |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...report.scenarios.map((s) => {
      const x = summarize(s);
      const coarse = x.minTicks < minimumTicks ? " †" : "";
      return `| ${s.label} | ${s.store} | ${range(x.cpu)}${coarse} | ${us(x.rps)} | ${ms(x.p50Ms)} | ${ms(x.p99.median)} | ${s.store === "PostgreSQL" ? range(x.db) : "–"} | ${s.store === "PostgreSQL" ? us(x.walBytes) : "–"} | ${us(x.generatorUs)} | ${mb(s.peakRssBytes)} |`;
    }),
  ].join("\n");
}

/** cpuOf is a scenario's median CPU µs per request in this run, NaN when it did not run. */
function cpuOf(report: BenchReport, id: string): number {
  const s = report.scenarios.find((x) => x.id === id);
  return s ? summarize(s).cpu.median : NaN;
}
function dbOf(report: BenchReport, id: string): number {
  const s = report.scenarios.find((x) => x.id === id);
  return s ? summarize(s).db.median : NaN;
}
function summaryOf(report: BenchReport, id: string): Summary | undefined {
  const s = report.scenarios.find((x) => x.id === id);
  return s && summarize(s);
}

/** One scenario of ours against the last full run. */
export interface Regression {
  id: string;
  /** Median µs per request, last run and this one. */
  before: number;
  now: number;
  /** Relative change of the median, net of the machine's (0.2: 20 % more CPU per request). */
  change: number;
  /** This run's fastest round, scaled, is slower than the last run's slowest. */
  disjoint: boolean;
  regressed: boolean;
}

/**
 * machineFactors is how much slower (> 1) or faster the machine was than in
 * the last full run, per store: the geometric mean of this run's over the
 * last run's median for the reference scenarios of that store, whose code
 * never changes. Several references, so one noisy figure does not decide it;
 * per store, because PostgreSQL's share of a busy machine moves on its own.
 */
export function machineFactors(report: BenchReport, figure: "cpu" | "db" = "cpu"): Map<string, number> {
  const logs = new Map<string, number[]>();
  for (const s of report.scenarios) {
    const before = recordedOf(report.previous, figure)?.[s.id];
    const now = summarize(s)[figure].median;
    if (s.kind !== "reference" || !before || !Number.isFinite(now)) continue;
    logs.set(s.store, [...(logs.get(s.store) ?? []), Math.log(now / before.median)]);
  }
  return new Map([...logs].map(([store, l]) => [store, Math.exp(l.reduce((a, b) => a + b, 0) / l.length)]));
}

const recordedOf = (record: RunRecord | undefined, figure: "cpu" | "db") => (figure === "cpu" ? record?.cpuUsPerRequest : record?.dbUsPerRequest);

/**
 * regressionsOf compares each scenario of ours with the last full run, net of
 * the machine's change; undefined without a last run. figure "db" compares
 * the PostgreSQL backends' CPU per request (issue 24: a change that makes a
 * create more than 15 % more expensive in the database shows here), scaled
 * by the references' database CPU.
 */
export function regressionsOf(report: BenchReport, figure: "cpu" | "db" = "cpu"): Regression[] | undefined {
  const previous = recordedOf(report.previous, figure);
  if (!previous) return undefined;
  const factors = machineFactors(report, figure);
  return report.scenarios
    .filter((s) => s.kind === "ours" && previous[s.id] !== undefined && factors.has(s.store) && Number.isFinite(summarize(s)[figure].median))
    .map((s) => {
      const before = previous[s.id]!;
      const now = summarize(s)[figure];
      const factor = factors.get(s.store)!;
      const change = now.median / factor / before.median - 1;
      const disjoint = now.min / factor > before.max;
      return { id: s.id, before: before.median, now: now.median, change, disjoint, regressed: change > regressionTolerance && disjoint };
    });
}

/**
 * targetsOf judges the issue's targets on one run. A throughput ratio
 * "A ≥ k× B" is B's CPU per request over A's: the rate one core sustains.
 */
export function targetsOf(report: BenchReport): Target[] {
  const targets: Target[] = [];
  const judge = (value: number, ok: (v: number) => boolean) => (Number.isFinite(value) ? ok(value) : undefined);
  const rate = (name: string, ours: string, reference: string, goal: number) => {
    const r = cpuOf(report, reference) / cpuOf(report, ours);
    targets.push({
      name,
      figure: `${times(r)} (${us(cpuOf(report, ours))} vs ${us(cpuOf(report, reference))} µs/request)`,
      goal: `≥ ${goal.toFixed(1)}×`,
      met: judge(r, (v) => v >= goal),
    });
  };
  const cost = (name: string, ours: string, reference: string, goal: number) => {
    const r = cpuOf(report, ours) / cpuOf(report, reference);
    targets.push({
      name,
      figure: `${times(r)} (${us(cpuOf(report, ours))} vs ${us(cpuOf(report, reference))} µs/request)`,
      goal: `≤ ${goal}×`,
      met: judge(r, (v) => v <= goal),
    });
  };

  rate("REST create (memory) vs bare node:http create", "rest-create-memory", "ref-node", 0.5);
  rate("REST create (memory) vs Fastify 5 + schema + bearer + pino line", "rest-create-memory", "ref-fastify-pino", 1.0);
  cost("REST list, a page of 50 (memory): CPU vs a REST create", "rest-list-memory", "rest-create-memory", 3);
  rate("gRPC create vs REST create (memory)", "grpc-create-memory", "rest-create-memory", 1.0);
  rate("Connect JSON create vs REST create (memory)", "connect-create-memory", "rest-create-memory", 0.8);
  {
    const r = cpuOf(report, "ref-pg-cte") / cpuOf(report, "rest-create-postgres");
    const withDb =
      (cpuOf(report, "ref-pg-cte") + dbOf(report, "ref-pg-cte")) / (cpuOf(report, "rest-create-postgres") + dbOf(report, "rest-create-postgres"));
    targets.push({
      name: "REST create (PostgreSQL) vs plain pg, one CTE insert of the same rows",
      figure: `${times(r)} (${us(cpuOf(report, "rest-create-postgres"))} vs ${us(cpuOf(report, "ref-pg-cte"))} µs/request in Node; with PostgreSQL's backends ${times(withDb)})`,
      goal: "≥ 0.6×",
      met: judge(r, (v) => v >= 0.6),
    });
  }
  {
    // Issue 24: our create on PostgreSQL against node:http + plain pg writing the intent and its event in one statement.
    const ours = summaryOf(report, "rest-create-postgres");
    const floor = summaryOf(report, "ref-pg-http");
    const r = ours && floor ? ours.rps / floor.rps : NaN;
    targets.push({
      name: "REST create (PostgreSQL) rate vs node:http + plain pg (intent + event row, one statement)",
      figure: `${times(r)} (${us(ours?.rps ?? NaN)} vs ${us(floor?.rps ?? NaN)} creates/s; WAL ${us(ours?.walBytes ?? NaN)} vs ${us(floor?.walBytes ?? NaN)} bytes/create)`,
      goal: "≥ 0.6×",
      met: judge(r, (v) => v >= 0.6),
    });
    const d = dbOf(report, "rest-create-postgres") / dbOf(report, "ref-pg-http");
    targets.push({
      name: "PostgreSQL CPU per create vs the same reference",
      figure: `${times(d)} (${us(dbOf(report, "rest-create-postgres"))} vs ${us(dbOf(report, "ref-pg-http"))} µs/create)`,
      goal: "≤ 2×",
      met: judge(d, (v) => v <= 2),
    });
  }
  {
    // Issue 24: "a list page of 50 … measured the same way" as the create, against the same kind of reference.
    const ours = summaryOf(report, "rest-list-postgres");
    const floor = summaryOf(report, "ref-pg-http-list");
    const r = ours && floor ? ours.rps / floor.rps : NaN;
    const d = dbOf(report, "rest-list-postgres") / dbOf(report, "ref-pg-http-list");
    targets.push({
      name: "REST list page of 50 (PostgreSQL) vs plain pg (node:http, the same page in one statement): PostgreSQL CPU per page",
      figure: `${times(d)} (${us(dbOf(report, "rest-list-postgres"))} vs ${us(dbOf(report, "ref-pg-http-list"))} µs/page); rate ${times(r)} (${us(ours?.rps ?? NaN)} vs ${us(floor?.rps ?? NaN)} pages/s); Node ${us(cpuOf(report, "rest-list-postgres"))} vs ${us(cpuOf(report, "ref-pg-http-list"))} µs/page`,
      goal: "≤ 2×",
      met: judge(d, (v) => v <= 2),
    });
  }
  cost("REST list, a page of 50: server CPU on PostgreSQL vs in memory", "rest-list-postgres", "rest-list-memory", 2);
  {
    const s = report.scenarios.find((x) => x.id === "rest-create-memory");
    const p99 = s ? summarize(s).p99 : undefined;
    targets.push({
      name: `p99 of REST create (memory) at ${report.connections} connections`,
      figure: p99 ? `${ms(p99.median)} ms [${ms(p99.min)}–${ms(p99.max)}]` : "–",
      goal: "≤ 10 ms",
      met: judge(p99?.median ?? NaN, (v) => v <= 10),
    });
  }

  for (const figure of ["cpu", "db"] as const) {
    const regressions = report.scenarios.length > 0 ? regressionsOf(report, figure) : undefined;
    if (!regressions) continue;
    const worse = regressions.filter((r) => r.regressed);
    const worst = [...regressions].sort((a, b) => b.change - a.change)[0];
    const change = (r: Regression) =>
      `${r.id} ${r.change >= 0 ? "+" : ""}${(r.change * 100).toFixed(0)}% (${us(r.before)} → ${us(r.now)} µs${r.disjoint ? ", ranges apart" : ""})`;
    const factors = [...machineFactors(report, figure)].map(([store, f]) => `${store} ${times(f)}`).join(", ");
    targets.push({
      name: `No regression: ${figure === "cpu" ? "CPU" : "PostgreSQL backends' CPU"} per request of each scenario of ours vs the last full run (${report.previous!.date}), net of the machine's change (the references': ${factors || "none ran"})`,
      figure: worse.length > 0 ? worse.map(change).join("; ") : `none${worst ? ` (largest change: ${change(worst)})` : ""}`,
      goal: `no median over +${regressionTolerance * 100}% with its range above the last run's`,
      met: worse.length === 0,
    });
  }
  const sizes = [...new Set(report.scale.map((p) => p.intents))].sort((a, b) => a - b);
  if (sizes.length >= 2) {
    const small = sizes[0]!;
    const large = sizes[sizes.length - 1]!;
    for (const page of ["first", "deep"] as const) {
      const a = report.scale.find((p) => p.intents === small && p.page === page)!;
      const b = report.scale.find((p) => p.intents === large && p.page === page)!;
      const r = b.p50Ms / a.p50Ms;
      targets.push({
        name: `No regression: list p50 (PostgreSQL) at ${large.toLocaleString("en")} intents vs ${small.toLocaleString("en")}, ${page === "first" ? "first page" : "deep page"}`,
        figure: `${times(r)} (${ms(b.p50Ms)} vs ${ms(a.p50Ms)} ms)`,
        goal: "≤ 1.5×",
        met: judge(r, (v) => v <= 1.5),
      });
    }
  }
  if (report.soak) {
    const { firstThirdRss, lastThirdRss } = report.soak;
    const growth = (lastThirdRss - firstThirdRss) / firstThirdRss;
    targets.push({
      name: `RSS flat over a ${report.soak.seconds} s create soak (PostgreSQL, after a ${report.soak.warmupSeconds} s warm-up): median of the last third of the samples vs the first`,
      figure: `${mb(firstThirdRss)} → ${mb(lastThirdRss)} MiB (${growth >= 0 ? "+" : ""}${(growth * 100).toFixed(1)}%; ${mb(report.soak.startRss)} at the start, ${mb(report.soak.endRss)} at the end, peak ${mb(report.soak.maxRss)})`,
      goal: "≤ +10%",
      met: growth <= 0.1,
    });
  }
  if (report.startup) {
    const { testServer, npx, runs } = report.startup;
    targets.push(
      {
        name: `startTestServer() in a warm process to its first answered request (median of ${runs})`,
        figure: `${testServer.median.toFixed(0)} ms`,
        goal: `≤ ${startupTargets.testServer} ms`,
        met: testServer.median <= startupTargets.testServer,
      },
      {
        name: `npx payment-intents serve to its first answered request (median of ${runs})`,
        figure: `${npx.median.toFixed(0)} ms`,
        goal: `≤ ${startupTargets.command} ms`,
        met: npx.median <= startupTargets.command,
      },
    );
  }
  if (report.checkoutPayment) {
    const p = report.checkoutPayment;
    targets.push({
      name: `Checkout card payments per instance on PostgreSQL (issue 19: DB_POOL_MAX=${p.poolMax}, a ${p.latencyMs} ms processor, ${p.concurrency} customers at once)`,
      figure: `${p.perSecond.toFixed(0)} payments/s (p99 ${p.p99Ms.toFixed(0)} ms, ${p.others} other answers)`,
      goal: "≥ 100/s",
      met: p.perSecond >= 100 && p.others === 0,
    });
  }
  for (const w of (report.webhooks ?? []).filter((x) => x.ratePerSecond === undefined)) {
    targets.push(
      {
        name: `Webhook delivery keeps up with REST creates at full speed (${w.store}, ${w.connections} connections): backlog when the creates stop, and not growing`,
        figure: `${Math.round(w.deliveredRate).toLocaleString("en")} events delivered/s vs ${Math.round(w.createRate).toLocaleString("en")} creates/s; backlog ${w.backlog.third.toLocaleString("en")} → ${w.backlog.end.toLocaleString("en")} events`,
        goal: "backlog at the end ≤ 1 s of creates, not growing",
        met: keepsUp(w),
      },
      {
        name: `Webhook end-to-end latency, the status change (event timestamp) to receipt, p99 (${w.store}, creates at full speed)`,
        figure: `${Math.round(w.latency.p99Ms).toLocaleString("en")} ms (p50 ${Math.round(w.latency.p50Ms).toLocaleString("en")} ms)`,
        goal: `≤ ${webhookTargets.p99Ms} ms`,
        met: w.latency.p99Ms <= webhookTargets.p99Ms,
      },
    );
  }
  return targets;
}

/** statementsOf is a scenario's per-statement figures, median over its rounds; undefined when pg_stat_statements was not read. */
export function statementsOf(s: ScenarioResult): StatementFigure[] | undefined {
  const phases = s.rounds.map((r) => r.statements).filter((x): x is StatementFigure[] => x !== undefined);
  return phases.length > 0 ? mergeFigures(phases, median) : undefined;
}

/** The statement as one table cell: on one line, cut at 110 characters. */
const statementCell = (query: string) => {
  const line = query.replace(/\s+/g, " ").trim().replaceAll("|", "\\|");
  return `\`${line.length > 110 ? `${line.slice(0, 107)}…` : line}\``;
};

/**
 * renderStatements is the per-statement breakdown of each PostgreSQL
 * scenario (pg_stat_statements over its measured phases, median per
 * statement over the rounds): calls, execution and planning time and WAL
 * per request. Execution time is the backend's wall time inside the
 * executor, which on a loaded machine includes waiting for a core; the
 * backends' CPU from /proc in the table above is the cost. The checkout
 * payment's statements follow, per completed payment, when it ran.
 */
export function renderStatements(report: BenchReport): string[] {
  const tables: { title: string; figures: StatementFigure[] }[] = report.scenarios
    .filter((x) => x.store === "PostgreSQL")
    .flatMap((s) => {
      const figures = statementsOf(s);
      return figures ? [{ title: `${s.label} (\`${s.id}\`)`, figures }] : [];
    });
  const payment = report.checkoutPayment;
  if (payment?.statements) tables.push({ title: "Checkout card payment (`checkout-payment`; per completed payment)", figures: payment.statements });
  const lines = tables.flatMap(({ title, figures }) => statementTable(title, figures));
  if (lines.length === 0) return lines;
  return [
    "Per-statement breakdown on PostgreSQL (`pg_stat_statements` over each scenario's measured phases, median per statement over the rounds; execution time is wall time in the executor, which on a busy machine includes waiting for a core; WAL is what each statement wrote, commit records aside):",
    "",
    ...lines,
  ];
}

/** statementTable is one scenario's statements, per request: the costly ones alone, the rest (each under 1 % of the time and of the WAL) added up. */
function statementTable(title: string, figures: StatementFigure[]): string[] {
  const total = (f: (x: StatementFigure) => number) => figures.reduce((sum, x) => sum + f(x), 0);
  const time = total((x) => x.execUsPerRequest + x.planUsPerRequest);
  const wal = total((x) => x.walBytesPerRequest);
  const shown = figures.filter((x) => x.execUsPerRequest + x.planUsPerRequest >= time * 0.01 || x.walBytesPerRequest >= wal * 0.01);
  const rest = figures.filter((x) => !shown.includes(x));
  const num = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
  return [
    `${title}: ${num(time)} µs of statement time per request (execution ${num(total((x) => x.execUsPerRequest))}, planning ${num(total((x) => x.planUsPerRequest))}), ${num(wal)} WAL bytes per request from its statements.`,
    "",
    "| Statement | Calls/request | Exec µs/request | Exec µs/call | Plan µs/request | Plans/call | WAL bytes/request |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...shown.map(
      (x) =>
        `| ${statementCell(x.query)} | ${num(x.callsPerRequest, 2)} | ${num(x.execUsPerRequest)} | ${num(x.execUsPerRequest / x.callsPerRequest)} | ${num(x.planUsPerRequest)} | ${num(x.plansPerCall, 2)} | ${num(x.walBytesPerRequest)} |`,
    ),
    ...(rest.length > 0
      ? [
          `| ${rest.length} other statements | ${num(rest.reduce((a, x) => a + x.callsPerRequest, 0), 2)} | ${num(rest.reduce((a, x) => a + x.execUsPerRequest, 0))} | | ${num(rest.reduce((a, x) => a + x.planUsPerRequest, 0))} | | ${num(rest.reduce((a, x) => a + x.walBytesPerRequest, 0))} |`,
        ]
      : []),
    "",
  ];
}

/** renderReport is the markdown the bench prints and writes between the markers of docs/BENCHMARKS.md. */
export function renderReport(report: BenchReport): string {
  const m = report.machine;
  const ratio = (a: string, b: string) => times(cpuOf(report, b) / cpuOf(report, a));
  const coarse = report.scenarios.some((s) => summarize(s).minTicks < minimumTicks);
  const targets = targetsOf(report);
  const measured = targets.filter((t) => t.met !== undefined);
  const unmeasured = targets.filter((t) => t.met === undefined);
  const lines = [
    `Run of ${report.date}${report.quick ? " (`--quick`: short phases, two rounds, smaller scale; a check, not a result)" : ""}${report.profiled ? " (`--profile`: our servers ran under the CPU profiler, which inflates their figures)" : ""}.`,
    "",
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}; Node.js ${m.node}; ${m.postgres}; ${m.wrk}. Shared with other work while it ran (load average ${load(report.loadAverage.start)} at the start, ${load(report.loadAverage.end)} at the end, on ${m.cores} cores): the figures are medians of alternated rounds.`,
    `Each scenario: one server process for the whole run; ${report.rounds} rounds, every scenario once per round in the order below; in each, ${report.warmupSeconds} s of load before the first round's measurement and ${report.rewarmSeconds} s before later ones, then ${report.measureSeconds} s measured (longer, up to three times, for a process that spends CPU slowly, so each phase counts at least ~150 clock ticks) at ${report.connections} concurrent requests (wrk: ${report.connections} connections; gRPC: ${report.connections} streams over ${report.grpcConnections} HTTP/2 connections; plain pg: ${report.connections} workers on a pool of 10). CPU is the process's utime + stime from /proc/<pid>/stat (${report.ticksPerSecond} ticks/s) over the measured phase, divided by the requests it completed.`,
    "",
    scenarioTable(report),
    "",
    ...(coarse ? [`† a round measured fewer than ${minimumTicks} clock ticks: the tick is over 1 % of that figure.`, ""] : []),
    "Targets (ratios of this run's medians; \"A vs B ≥ k×\" compares the rate one core sustains, i.e. B's CPU per request over A's):",
    "",
    "| Target | Measured | Goal | Met |",
    "|---|---|---|---|",
    ...measured.map((t) => `| ${t.name} | ${t.figure} | ${t.goal} | ${t.met ? "met" : "**MISSED**"} |`),
    "",
    ...(unmeasured.length > 0 ? [`Not measured by this selection of scenarios: ${unmeasured.map((t) => t.name).join("; ")}.`, ""] : []),
    "Other ratios (rate, as above):",
    "",
    `- REST create without the request log vs with it (memory): ${ratio("rest-create-memory-quiet", "rest-create-memory")}; Fastify without its pino line vs with it: ${ratio("ref-fastify", "ref-fastify-pino")}`,
    `- Fastify 5 + pino vs bare node:http: ${ratio("ref-fastify-pino", "ref-node")}; raw node:http2 gRPC vs bare node:http: ${ratio("ref-grpc-http2", "ref-node")}`,
    `- gRPC create vs the raw node:http2 gRPC reference: ${ratio("grpc-create-memory", "ref-grpc-http2")}`,
    `- PostgreSQL: gRPC create vs REST create ${ratio("grpc-create-postgres", "rest-create-postgres")}; Connect JSON create vs REST create ${ratio("connect-create-postgres", "rest-create-postgres")}; REST create vs plain pg BEGIN + INSERT + COMMIT ${ratio("rest-create-postgres", "ref-pg-tx")}`,
    `- REST create, PostgreSQL vs memory: ${ratio("rest-create-postgres", "rest-create-memory")}`,
    `- REST list page of 50 on PostgreSQL, database CPU per page vs the plain-pg page with its statement prepared once per connection: ${times(dbOf(report, "rest-list-postgres") / dbOf(report, "ref-pg-http-list-prepared"))}; the prepared page vs the unnamed one: ${times(dbOf(report, "ref-pg-http-list-prepared") / dbOf(report, "ref-pg-http-list"))}`,
    "",
  ];
  lines.push(...renderStatements(report));
  if (report.scale.length > 0) {
    lines.push(
      "List latency on PostgreSQL (REST, a page of 50; one merchant per size in one table; sequential requests taken in turns):",
      "",
      "| Intents | Page | p50 ms | p99 ms | Requests |",
      "|---:|---|---:|---:|---:|",
      ...report.scale.map(
        (p) =>
          `| ${p.intents.toLocaleString("en")} | ${p.page === "first" ? "first" : `deep (after ${p.position.toLocaleString("en")})`} | ${ms(p.p50Ms)} | ${ms(p.p99Ms)} | ${p.requests} |`,
      ),
      "",
    );
  }
  if (report.soak) {
    const s = report.soak;
    const every = Math.max(1, Math.round(s.seconds / 6));
    lines.push(
      `Create soak on PostgreSQL, ${s.seconds} s after a ${s.warmupSeconds} s warm-up, at ${report.connections} connections: ${us(s.load.rps)} req/s, ${us(s.cpuUsPerRequest)} µs of server CPU and ${us(s.dbUsPerRequest ?? NaN)} µs of PostgreSQL CPU per request, p99 ${ms(s.load.p99Ms)} ms; server RSS ${mb(s.startRss)} MiB at the start, ${mb(s.endRss)} MiB at the end, peak ${mb(s.maxRss)} MiB.`,
      `RSS every ${every} s (MiB): ${s.samples
        .filter((_, i) => i % every === 0 || i === s.samples.length - 1)
        .map(mb)
        .join(", ")}.`,
      "",
    );
  }
  if (report.startup) lines.push(renderStartup(report.startup), "");
  if (report.checkoutPayment) {
    lines.push(
      `Checkout payments (\`bench/checkout-payment.ts\`; measured as the scenarios are, per completed payment: the service's and its PostgreSQL backends' CPU from /proc, the WAL; no plain-pg reference, as issue 24 asks for none): ${describeCheckoutPaymentBench(report.checkoutPayment)}.`,
      "",
    );
  }
  if (report.webhooks && report.webhooks.length > 0) {
    lines.push(
      "Webhook delivery (`bench/webhooks.ts`): wrk creating intents over REST for the time given, one endpoint of the load merchant, a receiver on 127.0.0.1 in the bench process that verifies each delivery with the `standardwebhooks` package and answers 204 at once; the server with the default `WEBHOOK_*` settings (private URLs allowed). Latency is from the event's timestamp to its arrival; the backlog is events recorded but not yet arrived, counted from those two times.",
      "",
      ...report.webhooks.map((w) => `- ${describeWebhookBench(w)}`),
      "",
    );
  }
  return lines.join("\n");
}

/** recordOf is what the next full run compares against. */
export function recordOf(report: BenchReport): RunRecord {
  const round1 = (x: number) => Math.round(x * 10) / 10;
  const rounded = ({ median, min, max }: Spread): Spread => ({ median: round1(median), min: round1(min), max: round1(max) });
  return {
    date: report.date,
    cpuUsPerRequest: Object.fromEntries(report.scenarios.map((s) => [s.id, rounded(summarize(s).cpu)])),
    dbUsPerRequest: Object.fromEntries(
      report.scenarios.filter((s) => Number.isFinite(summarize(s).db.median)).map((s) => [s.id, rounded(summarize(s).db)]),
    ),
  };
}

/** readRecord reads the last full run's record; undefined when there is none. */
export function readRecord(path: string): RunRecord | undefined {
  if (!existsSync(path)) return undefined;
  const record = JSON.parse(readFileSync(path, "utf8")) as { date: string; cpuUsPerRequest: Record<string, Spread | number> };
  // The first records kept only medians.
  const spreadOf = (v: Spread | number): Spread => (typeof v === "number" ? { median: v, min: v, max: v } : v);
  const record2 = record as { dbUsPerRequest?: Record<string, Spread> };
  return {
    date: record.date,
    cpuUsPerRequest: Object.fromEntries(Object.entries(record.cpuUsPerRequest).map(([id, v]) => [id, spreadOf(v)])),
    ...(record2.dbUsPerRequest && { dbUsPerRequest: record2.dbUsPerRequest }),
  };
}

export function writeRecord(path: string, record: RunRecord): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
}

const startMarker = "<!-- bench:results:start -->";
const endMarker = "<!-- bench:results:end -->";

const skeleton = `# Benchmarks

\`npm run bench\` measures the service against the limits of the machine it runs on; this file's results section is
rewritten by each full run.

## Results

${startMarker}
${endMarker}
`;

/** writeReport replaces the results section of the document, keeping everything written around it. */
export function writeReport(path: string, markdown: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const current = existsSync(path) ? readFileSync(path, "utf8") : skeleton;
  const start = current.indexOf(startMarker);
  const end = current.indexOf(endMarker);
  const base = start >= 0 && end > start ? current : `${current.trimEnd()}\n\n## Results\n\n${startMarker}\n${endMarker}\n`;
  const s = base.indexOf(startMarker);
  const e = base.indexOf(endMarker);
  writeFileSync(path, `${base.slice(0, s + startMarker.length)}\n${markdown.trimEnd()}\n${base.slice(e)}`);
}
