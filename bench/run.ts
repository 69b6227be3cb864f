/**
 * npm run bench [-- --quick] [-- --profile] [-- --only <regex>] [-- --no-write]
 *
 * Starts what it needs (the service as separate processes on port 0, in
 * memory and on a fresh PostgreSQL database, and the two baselines), warms
 * each scenario up, measures it, prints a markdown table with the ratios and
 * targets, and (full runs only) rewrites the results section of
 * docs/BENCHMARKS.md. --profile runs the create scenarios with --cpu-prof on
 * the server and prints where its time goes instead.
 */
import { existsSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../test/support/postgres.js";
import { runListScale, type ScalePoint } from "./list-scale.js";
import { renderReport, targetsOf, writeReport, type BenchReport, type Row } from "./report.js";
import {
  connectCreateBody,
  merchants,
  pageTokenSecret,
  restCreateBody,
  seedIntents,
  startService,
} from "./service.js";
import { runSoak, type SoakResult } from "./soak.js";
import { repoRoot, startBenchProcess, type BenchProcess } from "./support/bench-process.js";
import { formatProfileSummary, summarizeCpuProfile } from "./support/cpu-profile.js";
import { runGrpcCreateLoad } from "./support/grpc-load.js";
import type { LoadResult } from "./support/load-result.js";
import { describeMachine } from "./support/machine.js";
import { runWrk, wrkVersion } from "./support/wrk.js";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    only: { type: "string" },
    "no-write": { type: "boolean", default: false },
  },
});

const quick = flags.quick!;
const connections = 50;
const warmupSeconds = quick ? 1 : 5;
const measureSeconds = quick ? 3 : 15;
const scaleSizes = quick ? [10_000, 100_000] : [10_000, 1_000_000];
const scaleRequests = quick ? 50 : 300;
const soakSeconds = quick ? 10 : 60;
const soakWarmupSeconds = quick ? 2 : 20;
const listSeed = quick ? 200 : 1000;
const only = flags.only ? new RegExp(flags.only) : undefined;

const log = (line: string) => process.stdout.write(`# ${line}\n`);

const wrk = wrkVersion();
if (!wrk) {
  process.stderr.write("wrk is not installed. Install it with: apt-get install -y wrk nghttp2-client\n");
  process.exit(1);
}
const unavailable = await postgresUnavailable();
if (unavailable) {
  process.stderr.write(
    `${unavailable}\nThe PostgreSQL scenarios need a server: set TEST_DATABASE_URL, or start one on 127.0.0.1:5432 (trust auth for postgres).\n`,
  );
  process.exit(1);
}

const db: TestDatabase = await createTestDatabase();
const profileDir = flags.profile ? mkdtempSync(join(tmpdir(), "bench-profiles-")) : undefined;
const cleanups: (() => Promise<void>)[] = [async () => db.drop()];
process.on("SIGINT", () => {
  void Promise.allSettled(cleanups.map((c) => c())).then(() => process.exit(130));
});

const authorization = (key: string) => `Bearer ${key}`;
const restCreate = (server: BenchProcess, runId: string, seconds: number) =>
  runWrk({
    url: `${server.url}/v1/v2/payment-intents`,
    method: "POST",
    headers: { authorization: authorization(merchants.load.key), "content-type": "application/json" },
    body: restCreateBody,
    connections,
    durationSeconds: seconds,
    runId,
  });
const restList = (server: BenchProcess, runId: string, seconds: number) =>
  runWrk({
    url: `${server.url}/v1/v2/payment-intents?pageSize=50`,
    method: "GET",
    headers: { authorization: authorization(merchants.list.key) },
    connections,
    durationSeconds: seconds,
    runId,
  });
const connectCreate = (server: BenchProcess, runId: string, seconds: number) =>
  runWrk({
    url: `${server.url}/payments.v2.PaymentIntentService/CreatePaymentIntent`,
    method: "POST",
    headers: { authorization: authorization(merchants.load.key), "content-type": "application/json" },
    body: connectCreateBody,
    connections,
    durationSeconds: seconds,
    runId,
  });
const grpcCreate = (server: BenchProcess, runId: string, seconds: number) =>
  runGrpcCreateLoad({ url: server.url, apiKey: merchants.load.key, streams: connections, durationSeconds: seconds, runId });

interface Scenario {
  id: string;
  scenario: string;
  store: string;
  run(): Promise<{ result: LoadResult; peakRssBytes: number }>;
}

/** serviceScenario: a fresh service process, optional seeding, warm-up, measurement. */
function serviceScenario(
  id: string,
  scenario: string,
  store: "memory" | "postgres",
  drive: (server: BenchProcess, runId: string, seconds: number) => Promise<LoadResult>,
  seed?: (server: BenchProcess) => Promise<void>,
  extraEnv?: Record<string, string>,
): Scenario {
  return {
    id,
    scenario,
    store: store === "memory" ? "memory" : "PostgreSQL",
    async run() {
      const server = await startService({
        databaseUrl: store === "postgres" ? db.url : undefined,
        profileDir,
        profileName: id,
        extraEnv,
      });
      try {
        if (seed) await seed(server);
        await drive(server, `${id}-warm`, warmupSeconds);
        const result = await drive(server, `${id}-run`, measureSeconds);
        return { result, peakRssBytes: server.peakRss() };
      } finally {
        await server.stop();
      }
    },
  };
}

const seedList = (store: string) => (server: BenchProcess) => seedIntents(server.url, merchants.list.key, listSeed, `list-${store}`);

const scenarios: Scenario[] = [
  {
    id: "baseline-node",
    scenario: "Baseline: bare node:http create (Map)",
    store: "memory",
    async run() {
      const server = await startBenchProcess({ script: join("bench", "baseline-node.ts"), env: {} });
      try {
        // The very request of the REST create scenario, so the ratio compares like with like.
        const drive = (runId: string, seconds: number) => restCreate(server, runId, seconds);
        await drive("warm", warmupSeconds);
        const result = await drive("run", measureSeconds);
        return { result, peakRssBytes: server.peakRss() };
      } finally {
        await server.stop();
      }
    },
  },
  serviceScenario("rest-create-memory", "REST create", "memory", restCreate),
  serviceScenario("rest-create-memory-quiet", "REST create, no request log (LOG_LEVEL=warn)", "memory", restCreate, undefined, {
    LOG_LEVEL: "warn",
  }),
  serviceScenario("rest-list-memory", `REST list (page of 50 of ${listSeed})`, "memory", restList, seedList("memory")),
  serviceScenario("connect-create-memory", "Connect JSON create (HTTP/1.1)", "memory", connectCreate),
  serviceScenario("grpc-create-memory", "gRPC create (binary, HTTP/2)", "memory", grpcCreate),
  // Before the create scenarios: their bulk inserts set autovacuum going on the table the list reads.
  serviceScenario("rest-list-postgres", `REST list (page of 50 of ${listSeed})`, "postgres", restList, seedList("postgres")),
  {
    id: "baseline-pg",
    scenario: "Baseline: plain pg pool insert (same rows, pool of 10)",
    store: "PostgreSQL",
    async run() {
      // The service upserts API_KEYS (and migrates) at start: let one do so,
      // so the baseline writes for an existing merchant into the same schema.
      const service = await startService({ databaseUrl: db.url });
      await service.stop();
      const { execFile } = await import("node:child_process");
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--import", "tsx", join("bench", "baseline-pg.ts")],
          {
            cwd: repoRoot,
            encoding: "utf8",
            timeout: (warmupSeconds + measureSeconds + 60) * 1000,
            env: {
              ...process.env,
              DATABASE_URL: db.url,
              MERCHANT_ID: merchants.load.id,
              CONCURRENCY: String(connections),
              POOL_MAX: "10",
              WARMUP_SECONDS: String(warmupSeconds),
              DURATION_SECONDS: String(measureSeconds),
            },
          },
          (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
        ),
      );
      const parsed = JSON.parse(out.trim().split("\n").pop()!) as LoadResult & { peakRssBytes: number };
      return { result: parsed, peakRssBytes: parsed.peakRssBytes };
    },
  },
  serviceScenario("rest-create-postgres", "REST create", "postgres", restCreate),
  serviceScenario("connect-create-postgres", "Connect JSON create (HTTP/1.1)", "postgres", connectCreate),
  serviceScenario("grpc-create-postgres", "gRPC create (binary, HTTP/2)", "postgres", grpcCreate),
];

async function runScale(): Promise<ScalePoint[]> {
  const server = await startService({ databaseUrl: db.url });
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

async function runCreateSoak(): Promise<SoakResult> {
  const server = await startService({ databaseUrl: db.url });
  try {
    // Longer than a scenario's warm-up: the heap grows for the first 15–20 s of load before it settles.
    await restCreate(server, "soak-warm", soakWarmupSeconds);
    return await runSoak(server, soakSeconds, soakWarmupSeconds, () => restCreate(server, "soak-run", soakSeconds));
  } finally {
    await server.stop();
  }
}

try {
  const machine = await describeMachine(db.url, wrk);
  log(`machine: ${machine.cores} cores, ${machine.cpuModel}, Node.js ${machine.node}, ${machine.postgres}, ${machine.wrk}`);
  log(`database ${db.name}; ${quick ? "quick run" : "full run"}; ${connections} connections; ${warmupSeconds} s warm-up, ${measureSeconds} s per scenario`);
  const selected = scenarios.filter(
    (s) => (!only || only.test(s.id)) && (!flags.profile || /create/.test(s.id) || s.id === "rest-list-memory"),
  );

  const rows: Row[] = [];
  for (const s of selected) {
    log(`${s.scenario} [${s.store}] …`);
    const { result, peakRssBytes } = await s.run();
    rows.push({ id: s.id, scenario: s.scenario, store: s.store, result, peakRssBytes });
    log(
      `  ${Math.round(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, ${result.errors} errors, ${result.non2xx} non-2xx, peak RSS ${(peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
    );
  }

  if (profileDir) {
    for (const dir of readdirSync(profileDir).sort()) {
      // The main thread's profile is the largest; the others are the tsx loader's.
      const files = readdirSync(join(profileDir, dir))
        .filter((f) => f.endsWith(".cpuprofile"))
        .map((f) => join(profileDir, dir, f))
        .sort((a, b) => statSync(b).size - statSync(a).size);
      if (files[0]) process.stdout.write(`\n${formatProfileSummary(dir, summarizeCpuProfile(files[0]))}\n`);
    }
    log(`CPU profiles in ${profileDir} (open them in Chrome DevTools, Performance tab)`);
  } else {
    const runExtras = !only;
    const scale = runExtras ? await runScale() : [];
    if (runExtras) log(`create soak on PostgreSQL for ${soakSeconds} s …`);
    const soak = runExtras ? await runCreateSoak() : undefined;

    const report: BenchReport = {
      machine,
      date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC",
      quick,
      connections,
      warmupSeconds,
      measureSeconds,
      rows,
      scale,
      soak,
    };
    const markdown = renderReport(report);
    process.stdout.write(`\n${markdown}\n`);
    const docPath = join(repoRoot, "docs", "BENCHMARKS.md");
    if (!quick && !only && !flags["no-write"]) {
      writeReport(docPath, markdown);
      log(`wrote the results section of ${docPath}`);
    } else {
      log(`docs/BENCHMARKS.md ${existsSync(docPath) ? "left as it is" : "not written"} (${flags["no-write"] ? "--no-write" : "only full runs of every scenario write it"})`);
    }
    const missed = targetsOf(report).filter((t) => t.met === false);
    log(missed.length === 0 ? "every measured target met" : `targets not met: ${missed.map((t) => t.name).join("; ")}`);
  }
} finally {
  for (const cleanup of cleanups) await cleanup().catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
}
