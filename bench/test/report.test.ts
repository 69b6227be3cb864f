import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { regressionsOf, targetsOf, type BenchReport, type ScenarioResult } from "../report.js";
import type { CheckoutPaymentBenchResult } from "../checkout-payment.js";
import type { Measurement } from "../support/measure.js";

const round = (cpuUsPerRequest: number, p99Ms = 5, dbUsPerRequest?: number): Measurement => ({
  result: { requests: 1000, seconds: 5, rps: 200, p50Ms: 1, p99Ms, maxMs: 10, errors: 0, outcomes: { "201": 1000 } },
  cpuTicks: 500,
  cpuUsPerRequest,
  dbUsPerRequest,
  window: { startUs: 0, endUs: 1 },
});

const scenario = (id: string, rounds: Measurement[]): ScenarioResult => ({
  id,
  label: id,
  store: id.includes("postgres") || id.startsWith("ref-pg") ? "PostgreSQL" : "memory",
  kind: id.startsWith("ref-") ? "reference" : "ours",
  rounds,
  peakRssBytes: 0,
});

const report = (scenarios: ScenarioResult[], previous?: BenchReport["previous"]): BenchReport => ({
  machine: { cores: 2, cpuModel: "x", memoryGiB: 1, node: "v24", postgres: "15", wrk: "wrk", os: "Linux" },
  date: "2026-11-23 12:00 UTC",
  quick: false,
  profiled: false,
  connections: 50,
  grpcConnections: 5,
  rounds: 3,
  warmupSeconds: 5,
  rewarmSeconds: 1,
  measureSeconds: 6,
  ticksPerSecond: 100,
  loadAverage: { start: [1, 1, 1], end: [1, 1, 1] },
  scenarios,
  scale: [],
  previous,
});

describe("targetsOf", () => {
  it("judges a rate target as the reference's CPU per request over ours, on the medians of the rounds", () => {
    const targets = targetsOf(
      report([
        // Medians 60 and 150: 60 / 150 = 0.4× the bare rate, under 0.5×, although one round was fast.
        scenario("ref-node", [round(55), round(60), round(70)]),
        scenario("rest-create-memory", [round(100), round(150), round(160)]),
      ]),
    );
    const bare = targets.find((t) => t.name === "REST create (memory) vs bare node:http create")!;
    assert.equal(bare.met, false);
    assert.match(bare.figure, /^0\.40× \(150 vs 60 µs\/request\)$/);
  });

  it("judges a cost target as our CPU per request over the other scenario's", () => {
    const targets = targetsOf(
      report([scenario("rest-create-memory", [round(200)]), scenario("rest-list-memory", [round(590)])]),
    );
    const list = targets.find((t) => t.name.startsWith("REST list, a page of 50 (memory)"))!;
    assert.equal(list.met, true);
    assert.match(list.figure, /^2\.95×/);
  });

  it("compares PostgreSQL creates on the Node process's CPU and shows the database's alongside", () => {
    const targets = targetsOf(
      report([scenario("ref-pg-cte", [round(180, 5, 450)]), scenario("rest-create-postgres", [round(300, 5, 700)])]),
    );
    const pg = targets.find((t) => t.name.startsWith("REST create (PostgreSQL)"))!;
    assert.equal(pg.met, true);
    assert.match(pg.figure, /^0\.60× .* with PostgreSQL's backends 0\.63×\)$/);
  });

  it("judges the PostgreSQL list page on its database CPU against the plain-pg page, with the rates and Node's CPU beside", () => {
    const at = (rps: number, cpu: number, db: number): Measurement => {
      const m = round(cpu, 5, db);
      return { ...m, result: { ...m.result, rps } };
    };
    const list = (ours: Measurement[], reference: Measurement[]) =>
      targetsOf(report([scenario("ref-pg-http-list", reference), scenario("rest-list-postgres", ours)])).find((t) =>
        t.name.startsWith("REST list page of 50 (PostgreSQL) vs plain pg"),
      )!;
    // Medians: ours 900 µs of the database and 400 pages/s, the reference's 450 µs and 1,000 pages/s.
    const met = list([at(400, 700, 900), at(350, 800, 950), at(420, 650, 800)], [at(1000, 300, 450), at(900, 320, 500), at(1100, 280, 400)]);
    assert.equal(met.met, true);
    assert.equal(met.goal, "≤ 2×");
    assert.equal(met.figure, "2.00× (900 vs 450 µs/page); rate 0.40× (400 vs 1,000 pages/s); Node 700 vs 300 µs/page");
    const missed = list([at(400, 700, 901)], [at(1000, 300, 450)]);
    assert.equal(missed.met, false);
    assert.equal(list([at(400, 700, 900)], []).met, undefined);
  });

  it("takes the median p99 of the rounds against 10 ms", () => {
    const targets = targetsOf(report([scenario("rest-create-memory", [round(100, 8), round(100, 12), round(100, 9)])]));
    assert.equal(targets.find((t) => t.name.startsWith("p99"))!.met, true);
  });

  it("leaves a target whose scenarios did not run unjudged", () => {
    const targets = targetsOf(report([scenario("ref-node", [round(60)])]));
    assert.equal(targets.find((t) => t.name === "REST create (memory) vs bare node:http create")!.met, undefined);
  });
});

describe("regressionsOf", () => {
  const spread = (median: number, min = median, max = median) => ({ median, min, max });

  it("compares each scenario of ours net of how much the references say the machine changed", () => {
    // The references got 1.6× and 2.5× slower: the machine, 2× (their geometric mean). rest-create-memory's 2× is
    // then no regression; rest-list-memory's 2.6× is one.
    const previous = {
      date: "earlier",
      cpuUsPerRequest: {
        "ref-node": spread(50),
        "ref-fastify": spread(60),
        "rest-create-memory": spread(200, 190, 210),
        "rest-list-memory": spread(500, 480, 520),
      },
    };
    const now = report(
      [
        scenario("ref-node", [round(80)]),
        scenario("ref-fastify", [round(150)]),
        scenario("rest-create-memory", [round(400), round(390), round(410)]),
        scenario("rest-list-memory", [round(1300), round(1250), round(1350)]),
      ],
      previous,
    );
    const changes = Object.fromEntries(regressionsOf(now)!.map((r) => [r.id, [Math.round(r.change * 100), r.regressed]]));
    assert.deepEqual(changes, { "rest-create-memory": [0, false], "rest-list-memory": [30, true] });
    const target = targetsOf(now).find((t) => t.name.startsWith("No regression: CPU"))!;
    assert.equal(target.met, false);
    assert.match(target.name, /the references': memory 2\.00×/);
    assert.match(target.figure, /^rest-list-memory \+30% \(500 → 1,300 µs, ranges apart\)$/);
  });

  it("does not call a higher median a regression while the ranges overlap (noise)", () => {
    const previous = {
      date: "earlier",
      cpuUsPerRequest: { "ref-pg-cte": spread(100), "rest-create-postgres": spread(1200, 1000, 1800) },
    };
    const now = report([scenario("ref-pg-cte", [round(100)]), scenario("rest-create-postgres", [round(1400), round(1100), round(2000)])], previous);
    const [r] = regressionsOf(now)!;
    assert.equal(r!.regressed, false);
    assert.equal(targetsOf(now).find((t) => t.name.startsWith("No regression: CPU"))!.met, true);
  });

  it("compares the PostgreSQL backends' CPU of our scenarios net of the references' database CPU", () => {
    // The reference's database CPU went 500 → 600 (the machine, 1.2×): ours 700 → 980 is +17 % net, ranges apart.
    const previous = {
      date: "earlier",
      cpuUsPerRequest: { "ref-pg-http": spread(300), "rest-create-postgres": spread(800) },
      dbUsPerRequest: { "ref-pg-http": spread(500), "rest-create-postgres": spread(700, 680, 720) },
    };
    const now = report(
      [
        scenario("ref-pg-http", [round(300, 5, 600)]),
        scenario("rest-create-postgres", [round(800, 5, 980), round(800, 5, 960), round(800, 5, 1000)]),
      ],
      previous,
    );
    const [db] = regressionsOf(now, "db")!;
    assert.deepEqual([db!.id, Math.round(db!.change * 100), db!.regressed], ["rest-create-postgres", 17, true]);
    const target = targetsOf(now).find((t) => t.name.startsWith("No regression: PostgreSQL backends' CPU"))!;
    assert.equal(target.met, false);
    assert.match(target.figure, /^rest-create-postgres \+17% \(700 → 980 µs, ranges apart\)$/);
    // The Node CPU did not change: no regression there.
    assert.equal(targetsOf(now).find((t) => t.name.startsWith("No regression: CPU"))!.met, true);
  });

  it("makes no database comparison against a record without database figures", () => {
    const previous = { date: "earlier", cpuUsPerRequest: { "ref-pg-http": spread(300), "rest-create-postgres": spread(800) } };
    const now = report([scenario("ref-pg-http", [round(300, 5, 600)]), scenario("rest-create-postgres", [round(800, 5, 980)])], previous);
    assert.equal(regressionsOf(now, "db"), undefined);
    assert.equal(targetsOf(now).find((t) => t.name.startsWith("No regression: PostgreSQL backends' CPU")), undefined);
  });

  it("reads a record of the first format, medians only", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { readRecord } = await import("../report.js");
    const dir = mkdtempSync(join(tmpdir(), "bench-record-"));
    try {
      writeFileSync(join(dir, "r.json"), JSON.stringify({ date: "d", cpuUsPerRequest: { "ref-node": 47.2 } }));
      assert.deepEqual(readRecord(join(dir, "r.json")), { date: "d", cpuUsPerRequest: { "ref-node": spread(47.2) } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the soak target", () => {
  it("compares the medians of the last and first thirds of the RSS samples, not two single samples", () => {
    const mib = 2 ** 20;
    // One high sample at the very end (a heap growing before a major collection) does not decide it.
    const samples = [300, 301, 302, 303, 302, 303, 304, 303, 302, 360].map((x) => x * mib);
    const soak = {
      seconds: 9,
      warmupSeconds: 20,
      load: round(100).result,
      cpuUsPerRequest: 700,
      startRss: samples[0]!,
      endRss: samples[samples.length - 1]!,
      maxRss: 360 * mib,
      firstThirdRss: 301 * mib,
      lastThirdRss: 303 * mib,
      samples,
    };
    const target = targetsOf({ ...report([]), soak }).find((t) => t.name.startsWith("RSS flat"))!;
    assert.equal(target.met, true);
    assert.match(target.figure, /^301 → 303 MiB \(\+0\.7%; 300 at the start, 360 at the end, peak 360\)$/);
  });
});

describe("statementFigures and renderStatements", () => {
  it("turns two pg_stat_statements snapshots into per-request figures, a new statement counted whole, costliest first", async () => {
    const { statementFigures } = await import("../support/statement-stats.js");
    const counters = (query: string, calls: number, execMs: number, planMs: number, plans: number, walBytes: number) => ({
      key: query,
      query,
      calls,
      execMs,
      planMs,
      plans,
      walBytes,
      rows: calls,
    });
    const before = new Map([["insert", counters("insert", 100, 50, 0, 1, 400_000)]]);
    const after = new Map([
      ["insert", counters("insert", 1100, 550, 0, 1, 4_400_000)],
      ["select set_config", counters("select set_config", 1000, 20, 1, 1000, 0)],
    ]);
    const figures = statementFigures(before, after, 1000);
    assert.deepEqual(
      figures.map((f) => [f.query, f.callsPerRequest, f.execUsPerRequest, f.planUsPerRequest, f.plansPerCall, f.walBytesPerRequest]),
      [
        ["insert", 1, 500, 0, 0, 4000],
        ["select set_config", 1, 20, 1, 1, 0],
      ],
    );
  });

  it("prints each PostgreSQL scenario's statements, and takes their WAL as the scenario's", async () => {
    const { renderStatements, summarize } = await import("../report.js");
    const statements = [
      { query: "with inserted as (\n insert into payment_intents | x", callsPerRequest: 1, execUsPerRequest: 500, planUsPerRequest: 0, plansPerCall: 0, walBytesPerRequest: 4000 },
      { query: "select set_config($1)", callsPerRequest: 1, execUsPerRequest: 20, planUsPerRequest: 0, plansPerCall: 0, walBytesPerRequest: 0 },
      { query: "select 1", callsPerRequest: 0.01, execUsPerRequest: 0.1, planUsPerRequest: 0, plansPerCall: 1, walBytesPerRequest: 0 },
    ];
    const s = scenario("rest-create-postgres", [{ ...round(800, 5, 700), walBytesPerRequest: 90_000, statements }]);
    assert.equal(summarize(s).walBytes, 4000);
    const lines = renderStatements(report([s]));
    assert.ok(lines.includes("rest-create-postgres (`rest-create-postgres`): 520 µs of statement time per request (execution 520, planning 0), 4000 WAL bytes per request from its statements."));
    assert.ok(lines.includes("| `with inserted as ( insert into payment_intents \\| x` | 1.00 | 500 | 500 | 0 | 0.00 | 4000 |"));
    assert.ok(lines.includes("| 1 other statements | 0.01 | 0 | | 0 | | 0 |"));
  });
});

describe("the checkout payment in the report", () => {
  const payment = (over: Partial<CheckoutPaymentBenchResult> = {}): CheckoutPaymentBenchResult => ({
    latencyMs: 1000,
    concurrency: 250,
    poolMax: 10,
    perSecond: 120,
    measured: 600,
    p50Ms: 1010,
    p99Ms: 1100,
    others: 0,
    serviceCpuMs: 1.25,
    databaseCpuMs: 0.8,
    walBytesPerPayment: 6543.4,
    walSource: "cluster",
    serviceCores: 0.5,
    poolBusy: 1.5,
    poolWaiting: 0,
    ...over,
  });

  it("judges the payments per second against 100, a run with other answers missing it", () => {
    const target = (p: CheckoutPaymentBenchResult) =>
      targetsOf({ ...report([]), checkoutPayment: p }).find((t) => t.name.startsWith("Checkout card payments per instance"))!;
    assert.equal(target(payment()).met, true);
    assert.equal(target(payment()).figure, "120 payments/s (p99 1100 ms, 0 other answers)");
    assert.equal(target(payment({ perSecond: 99 })).met, false);
    assert.equal(target(payment({ others: 1 })).met, false);
    assert.equal(targetsOf(report([])).some((t) => t.name.startsWith("Checkout card payments")), false);
  });

  it("states CPU and WAL per payment as the scenarios do, says where the WAL came from, and breaks down its statements", async () => {
    const { renderReport } = await import("../report.js");
    const statements = [
      { query: "update payment_intents set status = $1", callsPerRequest: 2, execUsPerRequest: 300, planUsPerRequest: 0, plansPerCall: 0, walBytesPerRequest: 5000 },
    ];
    const cluster = renderReport({ ...report([]), checkoutPayment: payment() });
    assert.match(cluster, /per payment: service CPU 1,250 µs, PostgreSQL CPU 800 µs, WAL 6,543 bytes \(the cluster's, other writers included\)/);
    assert.match(cluster, /no plain-pg reference, as issue 24 asks for none/);
    const measured = renderReport({ ...report([]), checkoutPayment: payment({ walSource: "statements", walBytesPerPayment: 5000, statements }) });
    assert.match(measured, /WAL 5,000 bytes \(its statements'\)/);
    assert.ok(measured.includes("Checkout card payment (`checkout-payment`; per completed payment): 300 µs of statement time per request (execution 300, planning 0), 5000 WAL bytes per request from its statements."));
    assert.ok(measured.includes("| `update payment_intents set status = $1` | 2.00 | 300 | 150 | 0 | 0.00 | 5000 |"));
  });
});
