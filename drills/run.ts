/**
 * npm run drills [-- --quick] [-- --only <regex>] [-- --no-write]
 *
 * Fault drills against real server processes on fresh PostgreSQL databases:
 * duplicate storm, crash (SIGKILL), database outage, hostile input, tenant
 * isolation, hostile connections, webhooks (receiver outage, kill -9
 * mid-delivery, two instances, a dead endpoint beside a healthy one), a refund storm on one intent, the payment
 * lifecycle (kill -9 between begin and outcome, a processor outage, duplicate and reordered processor
 * webhooks), and the fleet (three instances behind the
 * deploy/ HAProxy and PgBouncer). Each prints what it did and a PASS/FAIL line with its figures;
 * a full run rewrites the results section of docs/RELIABILITY.md, and a full
 * run of some drills (--only) rewrites their own blocks in it. --quick
 * shrinks every drill (what CI runs). Exits non-zero when a drill fails.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { postgresUnavailable } from "../test/support/postgres.js";
import { runCrash } from "./crash.js";
import { runDuplicateStorm } from "./duplicate-storm.js";
import { runFleetDrills } from "./fleet.js";
import { runHostileConnections } from "./hostile-connections.js";
import { describeHostileInput, runHostileInput } from "./hostile-input.js";
import { runOutage } from "./outage.js";
import { runPaymentKill, runProcessorOutage, runProcessorWebhookStorm } from "./payment-lifecycle.js";
import { runRefundStorm } from "./refund-storm.js";
import { formatDrillReport, type DrillReport } from "./support/drill-report.js";
import { startProcessTarget } from "./support/process-target.js";
import { describeTenantIsolation, runTenantIsolation } from "./tenant-isolation.js";
import { runDeadEndpoint, runNoisyNeighbour, runReceiverOutage, runTwoInstances, runWebhookCrash } from "./webhooks.js";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    "no-write": { type: "boolean", default: false },
  },
});
const quick = flags.quick!;
/** Other work on the machine, which the figures depend on. */
const loadAtStart = os.loadavg()[0]!;
const only = flags.only ? new RegExp(flags.only, "i") : undefined;

const unavailable = await postgresUnavailable();
if (unavailable) {
  process.stderr.write(`${unavailable}\nThe drills need PostgreSQL: set TEST_DATABASE_URL, or start one on 127.0.0.1:5432 (trust auth for postgres).\n`);
  process.exit(1);
}

/** A drill gives one report, or several (the fleet: one per scenario on one deployment). */
const drills: { name: string; run(): Promise<DrillReport | DrillReport[]> }[] = [
  {
    name: "Duplicate storm",
    run: () => runDuplicateStorm(quick ? { creates: 200, references: 20 } : { creates: 1000, references: 100 }),
  },
  { name: "Crash", run: () => runCrash(quick ? { concurrency: 8, burstMs: 1000 } : { concurrency: 32, burstMs: 3000 }) },
  { name: "Database outage", run: () => runOutage(quick ? { outageMs: 3000, concurrency: 4 } : { outageMs: 4000, concurrency: 8 }) },
  {
    name: "Hostile input",
    async run() {
      const target = await startProcessTarget();
      try {
        const runs = quick
          ? { "rest-bodies": 200, "query-strings": 100, paths: 150, headers: 100, "connect-json": 100 }
          : { "rest-bodies": 3000, "query-strings": 1000, paths: 2000, headers: 1000, "connect-json": 2000 };
        const result = await runHostileInput(target, { runs });
        const lines = describeHostileInput(result);
        const total = result.kinds.reduce((sum, k) => sum + k.runs, 0);
        const fivexx = result.kinds.reduce((sum, k) => sum + Object.entries(k.statuses).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0), 0);
        return {
          name: "Hostile input",
          did: "fast-check fuzzing, on the raw HTTP/1.1 wire, of REST bodies (intents, settlement accounts, webhook endpoints, redeliveries), query strings, paths and methods, headers (Authorization, Content-Type, arbitrary names and obs-text values), and Connect JSON, against a server process on PostgreSQL; what was stored is read back with SQL",
          headline: `${total} cases, ${fivexx} 5xx, ${result.kinds.filter((k) => k.failure).length} properties failed, ${result.storedButRejected.length} rows stored for rejected requests, server ${result.alive ? "alive" : "DEAD"}`,
          figures: lines,
          passed: result.passed,
        };
      } finally {
        await target.close();
      }
    },
  },
  {
    name: "Tenant isolation",
    async run() {
      // The victim's webhook receiver listens on 127.0.0.1.
      const target = await startProcessTarget({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: "true" } });
      try {
        const result = await runTenantIsolation(target, {
          timingSamples: quick ? 100 : 500,
          timingToleranceMs: 0.2,
          timingToleranceRatio: 0.2,
        });
        return {
          name: "Tenant isolation",
          did: "merchant b (attacker) tries every REST route and every RPC (Connect JSON and gRPC) with merchant a's (victim's) intent ids, client references, page token, settlement account, bank account number, checkout tokens, event ids and webhook endpoint (get, redeliver, list deliveries, rotate, delete, resume StreamEvents after the victim's event) and API keys (list, roll, revoke); the victim's test key against its live objects and keys, and its read-only key against every kind of write; against a server process on PostgreSQL",
          headline: `${result.attempts.filter((x) => x.ok).length}/${result.attempts.length} attempts held, ${result.leaks.length} victim values revealed, victim data ${result.victimUnchanged ? "unchanged" : "CHANGED"}, 404 medians ${result.timing.victimMedianMs.toFixed(3)} vs ${result.timing.randomMedianMs.toFixed(3)} ms`,
          figures: describeTenantIsolation(result),
          passed: result.passed,
        };
      } finally {
        await target.close();
      }
    },
  },
  {
    name: "Hostile connections",
    run: () =>
      runHostileConnections(
        quick
          ? { connections: 50, rounds: 1, pipelined: 1000, maxConnections: 200 }
          : { connections: 100, rounds: 2, pipelined: 2000, maxConnections: 1000 },
      ),
  },
  {
    name: "Webhooks: receiver outage",
    run: () => runReceiverOutage(quick ? { concurrency: 8, burstMs: 4000, outageMs: 3000 } : { concurrency: 16, burstMs: 10_000, outageMs: 6000 }),
  },
  { name: "Webhooks: kill -9 mid-delivery", run: () => runWebhookCrash(quick ? { concurrency: 8, burstMs: 1500 } : { concurrency: 16, burstMs: 4000 }) },
  { name: "Webhooks: two instances", run: () => runTwoInstances(quick ? { concurrency: 8, burstMs: 3000 } : { concurrency: 16, burstMs: 8000 }) },
  {
    name: "Webhooks: dead endpoint beside a healthy one",
    run: () => runDeadEndpoint(quick ? { concurrency: 4, ratePerSecond: 50, phaseMs: 3000 } : { concurrency: 4, ratePerSecond: 50, phaseMs: 8000 }),
  },
  {
    name: "Webhooks: noisy neighbour",
    run: () => runNoisyNeighbour(quick ? { noisyIntents: 32, phaseMs: 10_000, timeoutMs: 5000 } : { noisyIntents: 32, phaseMs: 30_000, timeoutMs: 10_000 }),
  },
  { name: "Refund storm", run: () => runRefundStorm(quick ? { refunds: 40, amount: 20_000 } : { refunds: 100, amount: 50_000 }) },
  {
    name: "Payments: kill -9 between begin and outcome",
    run: () =>
      runPaymentKill(
        quick
          ? { payments: 80, concurrency: 16, killAfterMs: 1500, latencyMs: 400, settleWithinMs: 50_000 }
          : { payments: 400, concurrency: 32, killAfterMs: 4000, latencyMs: 500, settleWithinMs: 90_000 },
      ),
  },
  {
    name: "Payments: processor outage",
    run: () => runProcessorOutage(quick ? { outageMs: 10_000, paymentsPerSecond: 2, settleWithinMs: 45_000 } : { outageMs: 60_000, paymentsPerSecond: 2, settleWithinMs: 90_000 }),
  },
  {
    name: "Payments: duplicate and reordered processor webhooks",
    run: () => runProcessorWebhookStorm(quick ? { attempts: 40, copies: 3 } : { attempts: 200, copies: 4 }),
  },
  // Last: its full run restarts the machine's PostgreSQL.
  { name: "Fleet", run: () => runFleetDrills({ quick }) },
];

const reports: DrillReport[] = [];
for (const drill of drills.filter((d) => !only || only.test(d.name))) {
  process.stdout.write(`\n# ${drill.name} …\n`);
  const started = performance.now();
  let ran: DrillReport[];
  try {
    const result = await drill.run();
    ran = Array.isArray(result) ? result : [result];
  } catch (error) {
    ran = [{ name: drill.name, did: "the drill could not run", headline: String(error), figures: [(error as Error).stack ?? String(error)], passed: false }];
  }
  if (ran.length === 1) ran[0]!.figures.push(`took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  for (const report of ran) {
    reports.push(report);
    process.stdout.write(`${formatDrillReport(report)}\n`);
  }
}

const failed = reports.filter((r) => !r.passed);
process.stdout.write(`\n${reports.length - failed.length} drills passed, ${failed.length} failed${failed.length ? `: ${failed.map((r) => r.name).join(", ")}` : ""}\n`);

const docPath = join(import.meta.dirname, "..", "docs", "RELIABILITY.md");
if (!quick && !only && !flags["no-write"]) {
  const results = [
    `Run of ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim()}), Node.js ${process.version}, load average ${loadAtStart.toFixed(1)} when it began.`,
    "",
    ...reports.map(formatDrillReport),
  ].join("\n");
  writeSection(docPath, results);
  process.stdout.write(`# wrote the results section of ${docPath}\n`);
} else if (!quick && only && !flags["no-write"] && reports.length > 0) {
  // Some drills on their own: their blocks are replaced (or added), saying when they ran; the rest stays.
  const when = `ran on its own (\`--only\`) at ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, load average ${loadAtStart.toFixed(1)} when it began`;
  writeBlocks(docPath, reports.map((r) => formatDrillReport({ ...r, figures: [...r.figures, when] })));
  process.stdout.write(`# wrote the blocks of ${reports.map((r) => r.name).join(", ")} in the results section of ${docPath}\n`);
}
process.exit(failed.length > 0 ? 1 : 0);

/** writeBlocks replaces each drill's block ("### <name>" to the next one) in the results section, or adds it at its end. */
function writeBlocks(path: string, blocks: string[]): void {
  const start = "<!-- drills:results:start -->";
  const end = "<!-- drills:results:end -->";
  const doc = existsSync(path) ? readFileSync(path, "utf8") : "";
  let section = doc.includes(start) && doc.includes(end) ? doc.slice(doc.indexOf(start) + start.length, doc.indexOf(end)).trim() : "";
  for (const block of blocks) {
    const heading = block.slice(0, block.indexOf("\n"));
    const at = section.split("\n").indexOf(heading);
    if (at < 0) {
      section = `${section}\n\n${block.trimEnd()}`;
      continue;
    }
    const lines = section.split("\n");
    const next = lines.findIndex((line, i) => i > at && line.startsWith("### "));
    const after = next < 0 ? [] : lines.slice(next);
    section = [...lines.slice(0, at), ...block.trimEnd().split("\n"), ...(after.length ? ["", ...after] : [])].join("\n");
  }
  writeSection(path, section);
}

/** writeSection replaces what lies between the results markers, keeping the rest of the document. */
function writeSection(path: string, markdown: string): void {
  const start = "<!-- drills:results:start -->";
  const end = "<!-- drills:results:end -->";
  mkdirSync(join(path, ".."), { recursive: true });
  let doc = existsSync(path) ? readFileSync(path, "utf8") : `# Reliability\n\n## Results\n\n${start}\n${end}\n`;
  if (!doc.includes(start) || !doc.includes(end)) doc = `${doc.trimEnd()}\n\n## Results\n\n${start}\n${end}\n`;
  writeFileSync(path, `${doc.slice(0, doc.indexOf(start) + start.length)}\n${markdown.trimEnd()}\n${doc.slice(doc.indexOf(end))}`);
}
