import { join } from "node:path";
import type { TestDatabase } from "../test/support/postgres.js";
import { connectCreateBody, merchants, restCreateBody, seedIntents, startService } from "./service.js";
import { startBenchProcess, type BenchProcess } from "./support/bench-process.js";
import { startCommandChild } from "./support/command-child.js";
import type { LoadResult } from "./support/load-result.js";
import type { Subject } from "./support/measure.js";
import { runWrk } from "./support/wrk.js";

/** One line of the table: a server (ours or a reference) and the one request it is driven with. */
export interface Scenario {
  /** Stable key the targets and the regression check refer to, e.g. "rest-create-memory". */
  id: string;
  label: string;
  store: "memory" | "PostgreSQL";
  /** Ours (src/main.ts) or a reference the issue compares against. */
  kind: "ours" | "reference";
  /** The one outcome every answer must have (see LoadResult.outcomes). */
  expected: string;
  start(): Promise<Subject>;
  /** Ours only: the same scenario served by another checkout (--baseline), as `<id>-baseline`. */
  baseline?(root: string): Scenario;
}

export interface ScenarioContext {
  db: TestDatabase;
  /** Where every process's stderr (request logs) goes, one file each. */
  logDir: string;
  /** Set with --profile: our servers run with --cpu-prof, one directory per scenario. */
  profileDir?: string;
  /** Requests in flight: wrk connections, gRPC streams, pg workers. */
  connections: number;
  /** HTTP/2 connections the gRPC streams are spread over. */
  grpcConnections: number;
  /** Intents of the list merchant: the list scenarios read the first page of 50 of them. */
  listSeed: number;
  /** --built: our servers (and a baseline's) run their dist/ build, as the image does, not src/ under tsx. */
  built?: boolean;
}

const authorization = (key: string) => `Bearer ${key}`;

/** The HTTP/1.1 requests of the scenarios, driven by wrk. */
function httpDrivers(connections: number) {
  return {
    restCreate: (url: string, runId: string, seconds: number) =>
      runWrk({
        url: `${url}/v1/v2/payment-intents`,
        method: "POST",
        headers: { authorization: authorization(merchants.load.key), "content-type": "application/json" },
        body: restCreateBody,
        connections,
        durationSeconds: seconds,
        runId,
      }),
    restList: (url: string, runId: string, seconds: number) =>
      runWrk({
        url: `${url}/v1/v2/payment-intents?pageSize=50`,
        method: "GET",
        headers: { authorization: authorization(merchants.list.key) },
        connections,
        durationSeconds: seconds,
        runId,
      }),
    connectCreate: (url: string, runId: string, seconds: number) =>
      runWrk({
        url: `${url}/payments.v2.PaymentIntentService/CreatePaymentIntent`,
        method: "POST",
        headers: { authorization: authorization(merchants.load.key), "content-type": "application/json" },
        body: connectCreateBody,
        connections,
        durationSeconds: seconds,
        runId,
      }),
  };
}

type Drive = (url: string, runId: string, seconds: number) => Promise<LoadResult>;

/** serverSubject wraps a started server and the wrk request that drives it. */
function serverSubject(server: BenchProcess, drive: Drive, usesDatabase: boolean): Subject {
  return {
    pid: server.pid,
    rss: server.rss,
    peakRss: server.peakRss,
    stderrTail: server.stderrTail,
    drive: (runId, seconds) => drive(server.url, runId, seconds),
    usesDatabase,
    stop: server.stop,
  };
}

/** grpcSubject wraps a started server and a gRPC load generator process of its own (bench/grpc-load.ts). */
async function grpcSubject(server: BenchProcess, context: ScenarioContext, id: string, usesDatabase: boolean): Promise<Subject> {
  const generator = await startCommandChild({
    script: join("bench", "grpc-load.ts"),
    env: { URL: server.url, API_KEY: merchants.load.key },
    logPath: join(context.logDir, `${id}.load.log`),
  });
  return {
    pid: server.pid,
    rss: server.rss,
    peakRss: server.peakRss,
    stderrTail: () => `${server.stderrTail()}\n--- load generator ---\n${generator.stderrTail()}`,
    drive: (runId, seconds) =>
      generator.request<LoadResult>({
        run: { runId, seconds, streams: context.connections, connections: context.grpcConnections },
      }),
    generatorPid: generator.pid,
    usesDatabase,
    stop: async () => {
      await generator.stop();
      await server.stop();
    },
  };
}

/** untilReady waits until a service's /readyz answers 200 (its migrations applied), for up to a minute. */
export async function untilReady(url: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const status = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
      (res) => res.arrayBuffer().then(() => res.status),
      () => 0,
    );
    if (status === 200) return;
    if (performance.now() > deadline) throw new Error(`${url}/readyz answered ${status} for a minute`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The API_KEYS every server of a run knows, reference servers included. */
const apiKeys = Object.values(merchants)
  .map((m) => `${m.id}:${m.key}`)
  .join(",");

/**
 * createScenarios lists every scenario of the bench in the order a round runs
 * them: the memory ones with their references, then PostgreSQL's.
 */
export function createScenarios(context: ScenarioContext): Scenario[] {
  const http = httpDrivers(context.connections);
  const logPath = (id: string) => join(context.logDir, `${id}.log`);
  let schemaReady: Promise<void> | undefined;
  /** withService runs fn against a service of this checkout on the run's database, started for it alone, once ready. */
  const withService = (name: string, fn: (server: BenchProcess) => Promise<void>) =>
    startService({ databaseUrl: context.db.url, logPath: logPath(name) }).then(async (s) => {
      try {
        // The service listens before its migrations are applied (/readyz answers 503 until they are): wait for ready.
        await untilReady(s.url);
        await fn(s);
      } finally {
        await s.stop();
      }
    });
  // The service migrates and upserts API_KEYS at start: let one do so first, so the servers that start
  // side by side find the schema in place and a baseline writes for an existing merchant.
  const ensureSchema = () => (schemaReady ??= withService("schema", async () => {}));
  let postgresListSeeded: Promise<void> | undefined;
  /**
   * seedPostgresList seeds the list merchant's intents on PostgreSQL once per
   * run, so rest-list-postgres and ref-pg-http-list read the same page of the
   * same data set: through our list server when it comes first, else through
   * a service started for it (the reference alone writes nothing).
   */
  const seedPostgresList = (server?: BenchProcess) =>
    (postgresListSeeded ??= server
      ? seedIntents(server.url, merchants.list.key, context.listSeed, "list-postgres")
      : ensureSchema().then(() => withService("list-seed", (s) => seedIntents(s.url, merchants.list.key, context.listSeed, "list-postgres"))));

  const ours = (
    id: string,
    label: string,
    store: "memory" | "postgres",
    expected: string,
    subject: (server: BenchProcess, id: string) => Promise<Subject>,
    options: { seed?: (server: BenchProcess, id: string) => Promise<void>; extraEnv?: Record<string, string> } = {},
  ): Scenario => {
    const at = (root: string | undefined): Scenario => {
      const runId = root === undefined ? id : `${id}-baseline`;
      return {
        id: runId,
        label: root === undefined ? label : `${label} [baseline]`,
        store: store === "memory" ? "memory" : "PostgreSQL",
        kind: "ours",
        expected,
        async start() {
          if (store === "postgres") await ensureSchema();
          const server = await startService({
            databaseUrl: store === "postgres" ? context.db.url : undefined,
            profileDir: context.profileDir,
            profileName: runId,
            extraEnv: options.extraEnv,
            logPath: logPath(runId),
            root,
            built: context.built,
          });
          try {
            // Under load the server may still be checking its database when seeding or the first warm-up
            // would start (503 until ready).
            await untilReady(server.url);
            await options.seed?.(server, runId);
            return await subject(server, runId);
          } catch (error) {
            await server.stop();
            throw error;
          }
        },
      };
    };
    return { ...at(undefined), baseline: at };
  };
  const wrkSubject = (drive: Drive, store: "memory" | "postgres") => async (server: BenchProcess) =>
    serverSubject(server, drive, store === "postgres");
  const grpc = (store: "memory" | "postgres") => (server: BenchProcess, id: string) => grpcSubject(server, context, id, store === "postgres");
  // Each server seeds references of its own: a baseline's seeding beside ours would otherwise be replays.
  const seedList = (server: BenchProcess, id: string) => seedIntents(server.url, merchants.list.key, context.listSeed, `list-${id}`);

  const reference = (id: string, label: string, script: string, env: Record<string, string>, drive: "rest" | "grpc"): Scenario => ({
    id,
    label,
    store: "memory",
    kind: "reference",
    expected: drive === "rest" ? "201" : "grpc-status 0",
    async start() {
      const server = await startBenchProcess({ script: join("bench", script), env: { API_KEYS: apiKeys, ...env }, logPath: logPath(id) });
      try {
        return drive === "rest" ? serverSubject(server, http.restCreate, false) : await grpcSubject(server, context, id, false);
      } catch (error) {
        await server.stop();
        throw error;
      }
    },
  });

  const pgBaseline = (id: string, label: string, mode: "cte" | "transaction"): Scenario => ({
    id,
    label,
    store: "PostgreSQL",
    kind: "reference",
    expected: "ok",
    async start() {
      await ensureSchema();
      const child = await startCommandChild({
        script: join("bench", "baseline-pg.ts"),
        env: { DATABASE_URL: context.db.url, MERCHANT_ID: merchants.load.id, POOL_MAX: "10", MODE: mode },
        logPath: logPath(id),
      });
      return {
        pid: child.pid,
        rss: child.rss,
        peakRss: child.peakRss,
        stderrTail: child.stderrTail,
        drive: (runId, seconds) => child.request<LoadResult>({ run: { runId, seconds, concurrency: context.connections } }),
        usesDatabase: true,
        stop: child.stop,
      };
    },
  });

  /** A node:http + plain pg reference (bench/reference-pg-http.ts) on the run's database, driven like ours. */
  const pgHttpReference = (
    id: string,
    label: string,
    drive: Drive,
    expected: string,
    prepare?: () => Promise<void>,
    env: Record<string, string> = {},
  ): Scenario => ({
    id,
    label,
    store: "PostgreSQL",
    kind: "reference",
    expected,
    async start() {
      await ensureSchema();
      await prepare?.();
      const server = await startBenchProcess({
        script: join("bench", "reference-pg-http.ts"),
        env: { DATABASE_URL: context.db.url, MERCHANT_ID: merchants.load.id, POOL_MAX: "10", API_KEYS: apiKeys, ...env },
        logPath: logPath(id),
      });
      return serverSubject(server, drive, true);
    },
  });

  const list = `REST list, a page of 50 of ${context.listSeed.toLocaleString("en")}`;
  return [
    reference("ref-node", "Reference: bare node:http create (parse, Map, JSON)", "baseline-node.ts", {}, "rest"),
    reference("ref-fastify", "Reference: Fastify 5 create (JSON schema, bearer check, Map)", "reference-fastify.ts", {}, "rest"),
    reference(
      "ref-fastify-pino",
      "Reference: Fastify 5 create + pino request line (to a file)",
      "reference-fastify.ts",
      { REQUEST_LOG: `file:${logPath("ref-fastify-pino.requests")}` },
      "rest",
    ),
    ours("rest-create-memory", "REST create", "memory", "201", wrkSubject(http.restCreate, "memory")),
    ours("rest-create-memory-quiet", "REST create, no request log (LOG_LEVEL=warn)", "memory", "201", wrkSubject(http.restCreate, "memory"), {
      extraEnv: { LOG_LEVEL: "warn" },
    }),
    ours("rest-list-memory", list, "memory", "200", wrkSubject(http.restList, "memory"), { seed: seedList }),
    ours("connect-create-memory", "Connect JSON create (HTTP/1.1)", "memory", "200", wrkSubject(http.connectCreate, "memory")),
    reference("ref-grpc-http2", "Reference: raw node:http2 gRPC unary create (hand-framed)", "reference-grpc-http2.ts", {}, "grpc"),
    ours("grpc-create-memory", "gRPC create (binary, HTTP/2)", "memory", "grpc-status 0", grpc("memory")),
    pgBaseline("ref-pg-cte", "Reference: plain pg, one CTE insert (intent + 2 methods), no HTTP", "cte"),
    pgHttpReference("ref-pg-http", "Reference: node:http + plain pg, intent + its event row in one statement", http.restCreate, "201"),
    pgHttpReference(
      "ref-pg-http-list",
      `Reference: node:http + plain pg, a page of 50 of the same ${context.listSeed.toLocaleString("en")} (one statement)`,
      http.restList,
      "200",
      () => seedPostgresList(),
    ),
    pgHttpReference(
      "ref-pg-http-list-prepared",
      "Reference: the same page, its statement prepared once per connection",
      http.restList,
      "200",
      () => seedPostgresList(),
      { LIST_PREPARED: "true" },
    ),
    pgBaseline("ref-pg-tx", "Reference: plain pg, BEGIN + INSERT + COMMIT, no HTTP", "transaction"),
    ours("rest-create-postgres", "REST create", "postgres", "201", wrkSubject(http.restCreate, "postgres")),
    ours("rest-list-postgres", list, "postgres", "200", wrkSubject(http.restList, "postgres"), {
      // Ours seeds the run's PostgreSQL list (unless ref-pg-http-list did first); a baseline adds its own.
      seed: (server, id) => (id === "rest-list-postgres" ? seedPostgresList(server) : seedList(server, id)),
    }),
    ours("connect-create-postgres", "Connect JSON create (HTTP/1.1)", "postgres", "200", wrkSubject(http.connectCreate, "postgres")),
    ours("grpc-create-postgres", "gRPC create (binary, HTTP/2)", "postgres", "grpc-status 0", grpc("postgres")),
  ];
}
