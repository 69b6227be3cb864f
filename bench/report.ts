import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ScalePoint } from "./list-scale.js";
import type { SoakResult } from "./soak.js";
import type { LoadResult } from "./support/load-result.js";
import type { Machine } from "./support/machine.js";

/** One measured scenario: a line of the table. */
export interface Row {
  /** Stable key the targets refer to, e.g. "rest-create-memory". */
  id: string;
  scenario: string;
  store: string;
  result: LoadResult;
  peakRssBytes: number;
}

export interface BenchReport {
  machine: Machine;
  date: string;
  quick: boolean;
  connections: number;
  warmupSeconds: number;
  measureSeconds: number;
  rows: Row[];
  scale: ScalePoint[];
  soak?: SoakResult;
}

/** A target of issue 6, judged on this run's figures. */
export interface Target {
  name: string;
  met: boolean | undefined;
  figure: string;
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "–");
const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "–");

function rowTable(rows: Row[]): string {
  return [
    "| Scenario | Store | Requests/s | p50 ms | p99 ms | Errors / non-2xx | Peak RSS (MiB) |",
    "|---|---|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.store} | ${Math.round(r.result.rps).toLocaleString("en")} | ${ms(r.result.p50Ms)} | ${ms(r.result.p99Ms)} | ${r.result.errors} / ${r.result.non2xx} | ${mb(r.peakRssBytes)} |`,
    ),
  ].join("\n");
}

/** targetsOf judges the issue's targets on the rows of one run. */
export function targetsOf(report: BenchReport): Target[] {
  const rps = (id: string) => report.rows.find((r) => r.id === id)?.result.rps ?? NaN;
  const row = (id: string) => report.rows.find((r) => r.id === id);
  const judge = (value: number, ok: boolean) => (Number.isFinite(value) ? ok : undefined);
  const targets: Target[] = [];

  const memoryRatio = rps("rest-create-memory") / rps("baseline-node");
  targets.push({
    name: "REST create (memory) ≥ 0.5× bare node:http",
    met: judge(memoryRatio, memoryRatio >= 0.5),
    figure: `${ratio(memoryRatio)} (${Math.round(rps("rest-create-memory"))} vs ${Math.round(rps("baseline-node"))} req/s)`,
  });
  const pgRatio = rps("rest-create-postgres") / rps("baseline-pg");
  targets.push({
    name: "REST create (PostgreSQL) ≥ 0.6× plain pg insert",
    met: judge(pgRatio, pgRatio >= 0.6),
    figure: `${ratio(pgRatio)} (${Math.round(rps("rest-create-postgres"))} vs ${Math.round(rps("baseline-pg"))} req/s)`,
  });
  for (const store of ["memory", "postgres"]) {
    const grpc = rps(`grpc-create-${store}`);
    const rest = rps(`rest-create-${store}`);
    targets.push({
      name: `gRPC create ≥ REST create (${store === "memory" ? "memory" : "PostgreSQL"})`,
      met: judge(grpc / rest, grpc >= rest),
      figure: `${ratio(grpc / rest)} (${Math.round(grpc)} vs ${Math.round(rest)} req/s)`,
    });
  }
  const p99 = row("rest-create-memory")?.result.p99Ms ?? NaN;
  targets.push({
    name: `p99 of REST create (memory) ≤ 10 ms at ${report.connections} connections`,
    met: judge(p99, p99 <= 10),
    figure: `${ms(p99)} ms`,
  });
  const sizes = [...new Set(report.scale.map((p) => p.intents))].sort((a, b) => a - b);
  if (sizes.length >= 2) {
    const small = sizes[0]!;
    const large = sizes[sizes.length - 1]!;
    for (const page of ["first", "deep"] as const) {
      const a = report.scale.find((p) => p.intents === small && p.page === page)!;
      const b = report.scale.find((p) => p.intents === large && p.page === page)!;
      const r = b.p50Ms / a.p50Ms;
      targets.push({
        name: `list p50 at ${large.toLocaleString("en")} ≤ 1.5× at ${small.toLocaleString("en")} (${page === "first" ? "first page" : "deep page"})`,
        met: judge(r, r <= 1.5),
        figure: `${ratio(r)} (${ms(b.p50Ms)} vs ${ms(a.p50Ms)} ms)`,
      });
    }
  }
  if (report.soak) {
    const { startRss, endRss } = report.soak;
    const growth = (endRss - startRss) / startRss;
    targets.push({
      name: `RSS flat over a ${report.soak.seconds} s create soak (PostgreSQL, after a ${report.soak.warmupSeconds} s warm-up; end within +10% of start)`,
      met: growth <= 0.1,
      figure: `${mb(startRss)} → ${mb(endRss)} MiB (${growth >= 0 ? "+" : ""}${(growth * 100).toFixed(1)}%, peak ${mb(report.soak.maxRss)} MiB)`,
    });
  }
  return targets;
}

/** renderReport is the markdown the bench prints and writes between the markers of docs/BENCHMARKS.md. */
export function renderReport(report: BenchReport): string {
  const m = report.machine;
  const rows = report.rows;
  const rps = (id: string) => rows.find((r) => r.id === id)?.result.rps ?? NaN;
  const lines = [
    `Run of ${report.date}${report.quick ? " (`--quick`: short durations, smaller scale; not for comparison)" : ""}.`,
    "",
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}; Node.js ${m.node}; ${m.postgres}; ${m.wrk}.`,
    `Each scenario: a fresh server process, ${report.warmupSeconds} s warm-up, then ${report.measureSeconds} s measured at ${report.connections} concurrent connections (gRPC: ${report.connections} streams on one HTTP/2 connection).`,
    "",
    rowTable(rows),
    "",
    "Ratios:",
    "",
    `- REST create / bare node:http (memory): ${ratio(rps("rest-create-memory") / rps("baseline-node"))}; without the request log: ${ratio(rps("rest-create-memory-quiet") / rps("baseline-node"))}`,
    `- REST create / plain pg insert (PostgreSQL): ${ratio(rps("rest-create-postgres") / rps("baseline-pg"))}`,
    `- gRPC create / REST create: memory ${ratio(rps("grpc-create-memory") / rps("rest-create-memory"))}, PostgreSQL ${ratio(rps("grpc-create-postgres") / rps("rest-create-postgres"))}`,
    `- Connect JSON create / REST create: memory ${ratio(rps("connect-create-memory") / rps("rest-create-memory"))}, PostgreSQL ${ratio(rps("connect-create-postgres") / rps("rest-create-postgres"))}`,
    `- PostgreSQL / memory, REST create: ${ratio(rps("rest-create-postgres") / rps("rest-create-memory"))}`,
    "",
  ];
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
    lines.push(
      `Create soak on PostgreSQL, ${s.seconds} s after a ${s.warmupSeconds} s warm-up, at ${report.connections} connections: ${Math.round(s.load.rps)} req/s, ${s.load.errors} errors / ${s.load.non2xx} non-2xx, p99 ${ms(s.load.p99Ms)} ms; server RSS ${mb(s.startRss)} MiB at the start, ${mb(s.endRss)} MiB at the end, peak ${mb(s.maxRss)} MiB.`,
      `RSS every ${Math.max(1, Math.round(s.seconds / 6))} s (MiB): ${s.samples
        .filter((_, i) => i % Math.max(1, Math.round(s.seconds / 6)) === 0 || i === s.samples.length - 1)
        .map(mb)
        .join(", ")}.`,
      "",
    );
  }
  lines.push(
    "Targets:",
    "",
    "| Target | Figure | Met |",
    "|---|---|---|",
    ...targetsOf(report).map((t) => `| ${t.name} | ${t.figure} | ${t.met === undefined ? "not measured" : t.met ? "met" : "**not met**"} |`),
    "",
  );
  return lines.join("\n");
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
