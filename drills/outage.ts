import { createTcpProxy } from "../test/postgres/support/tcp-proxy.js";
import { createTestDatabase } from "../test/support/postgres.js";
import { startServerProcess, type ServerProcess } from "../test/support/server-process.js";
import type { DrillReport } from "./support/drill-report.js";
import { drillServerEnv, newDrillKey } from "./support/process-target.js";

export interface OutageOptions {
  /** How long each outage lasts. */
  outageMs: number;
  /** Requests in flight at once. */
  concurrency: number;
}

const statementTimeoutMs = 1000;
/** The deadline, the client's backstop margin (250 ms, src/store/postgres/database.ts) and slack for a loaded machine. */
const hangBoundMs = statementTimeoutMs + 1000 + 500;
/** "Healthy again within seconds". */
const recoveryBoundMs = 5000;
const unavailableBody = JSON.stringify({ status: 503, title: "Service Unavailable", message: "the database is unavailable; retry later" });
/** A write whose commit was sent when the connection broke: honest about not knowing (README, What a 503 means). */
const unknownOutcomeBody = JSON.stringify({
  status: 503,
  title: "Service Unavailable",
  message: "the database did not confirm the write; retry the same request: it is safe",
});

interface Sample {
  at: number;
  phase: string;
  kind: "create" | "list";
  status: number;
  body: string;
  ms: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * runOutage puts a TCP proxy between a server process and its database and,
 * under a steady load of creates and lists, first refuses and cuts every
 * connection (the database is down), then lets connections open but never
 * answer (the database hangs). Every failed request must be the 503 with the
 * error body, none may take much longer than the statement timeout, the
 * process must stay up, and requests must succeed again within seconds of the
 * database's return, without a restart.
 */
export async function runOutage(options: OutageOptions): Promise<DrillReport> {
  const db = await createTestDatabase();
  const direct = new URL(db.url);
  const proxy = await createTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  const merchant = { id: "outage", key: newDrillKey() };
  let server: ServerProcess | undefined;
  try {
    server = await startServerProcess({
      databaseUrl: viaProxy.toString(),
      apiKeys: `${merchant.id}:${merchant.key}`,
      env: { ...drillServerEnv, DB_STATEMENT_TIMEOUT_MS: String(statementTimeoutMs) },
    });
    const url = server.url;
    const samples: Sample[] = [];
    const noAnswer: string[] = [];
    let phase = "healthy";
    let running = true;
    let counter = 0;
    const started = performance.now();

    const worker = async (index: number) => {
      while (running) {
        const isList = index === 0;
        const t0 = performance.now();
        try {
          const res = await fetch(
            isList ? `${url}/v1/v2/payment-intents?pageSize=5` : `${url}/v1/v2/payment-intents`,
            isList
              ? { headers: { authorization: `Bearer ${merchant.key}` }, signal: AbortSignal.timeout(15_000) }
              : {
                  method: "POST",
                  headers: { authorization: `Bearer ${merchant.key}`, "content-type": "application/json" },
                  body: JSON.stringify({ amount: 5000, customerEmail: "ada@example.com", clientReference: `outage-${++counter}` }),
                  signal: AbortSignal.timeout(15_000),
                },
          );
          const body = await res.text();
          samples.push({ at: t0 - started, phase, kind: isList ? "list" : "create", status: res.status, body, ms: performance.now() - t0 });
          if (res.status >= 300) await sleep(20);
        } catch (error) {
          noAnswer.push(`${phase}: ${String(error)}`);
          await sleep(50);
        }
      }
    };
    const workers = Array.from({ length: options.concurrency }, (_, i) => worker(i));

    /** Time from `since` until the first create answered 201 after it. */
    const recoveredAfter = async (since: number): Promise<number> => {
      const deadline = performance.now() + 20_000;
      while (performance.now() < deadline) {
        const ok = samples.find((s) => s.at >= since && s.status === 201);
        if (ok) return ok.at + ok.ms - since;
        await sleep(25);
      }
      return Infinity;
    };
    const readiness = async () => (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined))?.status;

    await sleep(1500);
    phase = "database down (refused)";
    await proxy.stop();
    await sleep(options.outageMs / 2);
    const readyWhileDown = await readiness();
    await sleep(options.outageMs / 2);
    await proxy.start();
    const backAt1 = performance.now() - started;
    phase = "recovering";
    const recovery1 = await recoveredAfter(backAt1);
    phase = "healthy";
    await sleep(1000);

    phase = "database hangs (no answer)";
    proxy.freeze();
    await sleep(options.outageMs);
    proxy.thaw();
    const backAt2 = performance.now() - started;
    phase = "recovering";
    const recovery2 = await recoveredAfter(backAt2);
    phase = "healthy";
    await sleep(1000);
    const readyAfter = await readiness();
    running = false;
    await Promise.all(workers);

    const failed = samples.filter((s) => s.status !== 200 && s.status !== 201);
    const wrong = failed.filter((s) => s.status !== 503 || (s.body !== unavailableBody && s.body !== unknownOutcomeBody));
    const slowest = Math.max(...samples.map((s) => s.ms));
    const served = samples.length - failed.length;
    const alive = server.child.exitCode === null && server.child.signalCode === null;
    const passed =
      wrong.length === 0 &&
      noAnswer.length === 0 &&
      slowest <= hangBoundMs &&
      alive &&
      recovery1 <= recoveryBoundMs &&
      recovery2 <= recoveryBoundMs &&
      failed.length > 0;
    const slowestOf = (list: Sample[]) => Math.round(Math.max(0, ...list.map((s) => s.ms)));
    const phaseCounts = (name: string) => {
      const inPhase = samples.filter((s) => s.phase === name);
      return `${inPhase.length} requests started, ${inPhase.filter((s) => s.status === 503).length}×503, slowest create ${slowestOf(inPhase.filter((s) => s.kind === "create"))} ms, slowest list ${slowestOf(inPhase.filter((s) => s.kind === "list"))} ms`;
    };
    return {
      name: "Database outage",
      did: `${options.concurrency} clients (creates, one listing) against a server process whose database connection runs through a TCP proxy (DB_STATEMENT_TIMEOUT_MS=${statementTimeoutMs}); the proxy refuses and cuts every connection for ${options.outageMs} ms, then, after recovery, accepts connections but forwards nothing for ${options.outageMs} ms`,
      headline: `${failed.length} failed requests all 503 with the error body (${wrong.length} other), slowest answer ${Math.round(slowest)} ms (bound ${hangBoundMs}), healthy again ${Math.round(recovery1)} ms and ${Math.round(recovery2)} ms after the database returned, process ${alive ? "up" : "DOWN"}`,
      figures: [
        `database down: ${phaseCounts("database down (refused)")}; /readyz answered ${readyWhileDown ?? "nothing"}`,
        `database hanging: ${phaseCounts("database hangs (no answer)")}`,
        `${served} requests served in all; ${noAnswer.length} without any answer${noAnswer.length ? ` (${noAnswer.slice(0, 2).join("; ")})` : ""}; /readyz after recovery: ${readyAfter ?? "nothing"}`,
        ...wrong.slice(0, 3).map((s) => `unexpected in ${s.phase}: ${s.status} ${s.body.slice(0, 160)}`),
        // What the server logged about them (the cause never reaches the client).
        ...(wrong.length
          ? server
              .stderr()
              .split("\n")
              .filter((line) => /"level":"error"|"level":50/.test(line))
              .slice(0, 3)
              .map((line) => `server log: ${line.slice(0, 700)}`)
          : []),
      ],
      passed,
    };
  } finally {
    await server?.stop();
    await proxy.stop();
    await db.drop();
  }
}
