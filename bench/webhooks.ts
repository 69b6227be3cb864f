import { join } from "node:path";
import { percentileOf, startVerifyingReceiver } from "../drills/support/webhook-receiver.js";
import { untilReady } from "./scenarios.js";
import { merchants, restCreateBody, startService } from "./service.js";
import { cpuTicks, readClockTicksPerSecond, threadCpuTicks, threadTicks } from "./support/proc-stat.js";
import { runWrk } from "./support/wrk.js";

/** The issue's targets: delivery keeps up with the creates (no growing backlog), and p99 from the change to its receipt ≤ 1 s. */
export const webhookTargets = { p99Ms: 1000 } as const;

export interface WebhookBenchOptions {
  store: "memory" | "PostgreSQL";
  /** Unset: the in-memory stores. */
  databaseUrl?: string;
  connections: number;
  /**
   * Unset: wrk at full speed. Set: creates paced at this rate (from this
   * process, up to `connections` in flight), a load the server is not
   * saturated by, to show the engine's latency apart from a backlog.
   */
  ratePerSecond?: number;
  seconds: number;
  logDir: string;
  /** How long to wait for the backlog to drain after the creates stop. */
  drainTimeoutMs?: number;
  /** Run the server under --cpu-prof, its profiles written in this directory (named by store and variant). */
  profileDir?: string;
  /** The checkout whose src/main.ts runs (default this one): a variant of another commit, for a comparison in one run. */
  root?: string;
  /** Names the variant in the result and the log file (default "this"). */
  variant?: string;
}

export interface WebhookBenchResult {
  store: "memory" | "PostgreSQL";
  /** Which build ran ("this" unless options.variant named another). */
  variant: string;
  connections: number;
  /** Paced creates a second; undefined: full speed. */
  ratePerSecond?: number;
  seconds: number;
  /** Creates answered 201 within the load (wrk's count), each one payment_intent.created event. */
  created: number;
  /** Events that arrived (a few more than created: creates still in flight when wrk stopped counting). */
  delivered: number;
  createRate: number;
  /** Events first received during the creates, per second of them. */
  deliveredRate: number;
  /** Events recorded but not yet received, a third of the way through, two thirds, and when the creates stopped. */
  backlog: { third: number; twoThirds: number; end: number };
  /** From the end of the creates until every event had arrived (NaN: not within the drain timeout). */
  drainMs: number;
  /** Events never received within the drain timeout. */
  undelivered: number;
  /** From the event's timestamp (the status change) to its receipt, for every event of the creates. */
  latency: { p50Ms: number; p99Ms: number; maxMs: number };
  receiver: { requests: number; invalid: number; duplicates: number; maxInFlight: number };
  /**
   * The server's CPU over the creates, per create (µs): the whole process
   * (every thread: the API, a delivery worker, libuv's pool, GC helpers), and
   * its main thread alone, the API's event loop (/proc/<pid>/task/<pid>/stat).
   */
  cpu: { processUsPerCreate: number; mainThreadUsPerCreate: number; byThreadName: Record<string, number> };
  /** The creates' stretch of the monotonic clock (µs, as a --cpu-prof profile's), to summarise a profile over it. */
  loadWindow: { startUs: number; endUs: number };
}

/**
 * runWebhookBench runs the service as its own process (operators' settings,
 * WEBHOOK_ALLOW_PRIVATE_URLS so the receiver can be on 127.0.0.1) with one
 * endpoint registered for the load merchant, and wrk creating intents at full
 * speed; a receiver in this process verifies every delivery with the
 * standardwebhooks package. The backlog is counted afterwards from the
 * events' own timestamps against their arrival, so nothing polls the service
 * while it is loaded.
 */
export async function runWebhookBench(options: WebhookBenchOptions): Promise<WebhookBenchResult> {
  const receiver = await startVerifyingReceiver();
  const server = await startService({
    databaseUrl: options.databaseUrl,
    logPath: join(options.logDir, `webhooks-${options.store}-${options.variant ?? "this"}.log`),
    extraEnv: { WEBHOOK_ALLOW_PRIVATE_URLS: "true" },
    root: options.root,
    profileDir: options.profileDir,
    profileName: `webhooks-${options.store}-${options.variant ?? "this"}`,
  });
  const ticksPerSecond = readClockTicksPerSecond();
  try {
    // It listens before its migrations are applied, answering 503 until then.
    await untilReady(server.url);
    const res = await fetch(`${server.url}/v1/v2/webhook-endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${merchants.load.key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url, description: "bench" }),
    });
    const text = await res.text();
    const endpoint = (res.status === 201 ? JSON.parse(text) : {}) as { secret?: string };
    if (res.status !== 201 || !endpoint.secret) throw new Error(`registering the bench endpoint answered ${res.status} ${text}`);
    receiver.setSecret(endpoint.secret);
    // One create delivered before the load: the engine (on a worker thread, its modules loaded) is running.
    const warm = await fetch(`${server.url}/v1/v2/payment-intents`, {
      method: "POST",
      headers: { authorization: `Bearer ${merchants.load.key}`, "content-type": "application/json" },
      body: restCreateBody.replace("{{unique}}", `warm-${Date.now()}`),
    });
    await warm.arrayBuffer();
    const warmDeadline = performance.now() + 60_000;
    while (receiver.accepted.size === 0 && performance.now() < warmDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
    if (receiver.accepted.size === 0) throw new Error("webhook bench: the warm-up create was not delivered within 60 s");
    receiver.accepted.clear();

    const processBefore = cpuTicks(server.pid) ?? NaN;
    const mainBefore = threadCpuTicks(server.pid, server.pid) ?? NaN;
    const threadsBefore = threadTicks(server.pid);
    const startUs = Number(process.hrtime.bigint() / 1000n);
    const from = Date.now();
    const load = options.ratePerSecond
      ? await pacedCreates(`${server.url}/v1/v2/payment-intents`, options.ratePerSecond, options.connections, options.seconds)
      : await runWrk({
          url: `${server.url}/v1/v2/payment-intents`,
          method: "POST",
          headers: { authorization: `Bearer ${merchants.load.key}`, "content-type": "application/json" },
          body: restCreateBody,
          connections: options.connections,
          durationSeconds: options.seconds,
          runId: `webhooks-${options.store}`,
        });
    const to = Date.now();
    const endUs = Number(process.hrtime.bigint() / 1000n);
    const processTicks = (cpuTicks(server.pid) ?? NaN) - processBefore;
    const mainTicks = (threadCpuTicks(server.pid, server.pid) ?? NaN) - mainBefore;
    const byThreadName: Record<string, number> = {};
    for (const [tid, { name, ticks }] of threadTicks(server.pid)) {
      const label = tid === server.pid ? "main" : name;
      byThreadName[label] = (byThreadName[label] ?? 0) + ticks - (threadsBefore.get(tid)?.ticks ?? 0);
    }
    const created = load.outcomes["201"] ?? 0;
    if (created === 0 || created !== load.requests) throw new Error(`webhook bench: expected every create to answer 201, got ${JSON.stringify(load.outcomes)}`);
    const deadline = performance.now() + (options.drainTimeoutMs ?? 60_000);
    // wrk counts the creates answered within its duration; the few still in flight then add events too, so the
    // drain ends once the count is reached and nothing new has come for half a second.
    let quietSince = performance.now();
    let seen = receiver.accepted.size;
    while (performance.now() < deadline && (receiver.accepted.size < created || performance.now() - quietSince < 500)) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (receiver.accepted.size !== seen) [seen, quietSince] = [receiver.accepted.size, performance.now()];
    }
    const events = [...receiver.accepted.values()];
    const drained = receiver.accepted.size >= created;
    const lastArrival = Math.max(...events.map((e) => e.receivedAt));
    // Events recorded by time t: their timestamps (every one arrives eventually, or is counted undelivered).
    const backlogAt = (t: number) => events.filter((e) => e.eventAt <= t).length - events.filter((e) => e.receivedAt <= t).length;
    const span = to - from;
    const duringLoad = events.filter((e) => e.eventAt >= from && e.eventAt <= to).map((e) => e.receivedAt - e.eventAt);
    const c = receiver.counts();
    const usPerCreate = (ticks: number) => (ticks * 1e6) / ticksPerSecond / created;
    return {
      store: options.store,
      variant: options.variant ?? "this",
      connections: options.connections,
      ratePerSecond: options.ratePerSecond,
      seconds: load.seconds,
      created,
      delivered: receiver.accepted.size,
      createRate: load.rps,
      deliveredRate: events.filter((e) => e.receivedAt >= from && e.receivedAt <= to).length / (span / 1000),
      backlog: {
        third: backlogAt(from + span / 3),
        twoThirds: backlogAt(from + (2 * span) / 3),
        end: backlogAt(to) + Math.max(0, created - receiver.accepted.size),
      },
      drainMs: drained ? Math.max(0, lastArrival - to) : NaN,
      undelivered: Math.max(0, created - receiver.accepted.size),
      latency: { p50Ms: percentileOf(duringLoad, 50), p99Ms: percentileOf(duringLoad, 99), maxMs: percentileOf(duringLoad, 100) },
      receiver: { requests: c.requests, invalid: c.invalid, duplicates: c.duplicates, maxInFlight: c.maxInFlight },
      cpu: {
        processUsPerCreate: usPerCreate(processTicks),
        mainThreadUsPerCreate: usPerCreate(mainTicks),
        byThreadName: Object.fromEntries(Object.entries(byThreadName).map(([name, ticks]) => [name, Math.round(usPerCreate(ticks))])),
      },
      loadWindow: { startUs, endUs },
    };
  } finally {
    await server.stop();
    await receiver.close();
  }
}

/** pacedCreates sends the bench's create body at ratePerSecond for seconds, at most `inFlight` at once. */
async function pacedCreates(url: string, ratePerSecond: number, inFlight: number, seconds: number): Promise<{ requests: number; seconds: number; rps: number; outcomes: Record<string, number> }> {
  const began = performance.now();
  const total = Math.round(ratePerSecond * seconds);
  const outcomes: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < total; n = next++) {
      const wait = began + (n * 1000) / ratePerSecond - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const res = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${merchants.load.key}`, "content-type": "application/json" },
        body: restCreateBody.replace("{{unique}}", `paced-${n}-${began}`),
      });
      await res.arrayBuffer();
      outcomes[String(res.status)] = (outcomes[String(res.status)] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsed = (performance.now() - began) / 1000;
  return { requests: total, seconds: elapsed, rps: total / elapsed, outcomes };
}

/**
 * keepsUp: delivery kept pace with the creates when, at their end, less than
 * a second of them waited (backlog ≤ the create rate) and the backlog was not
 * growing (at the end no more than at a third of the way plus 10 %).
 */
export function keepsUp(r: WebhookBenchResult): boolean {
  return r.undelivered === 0 && r.backlog.end <= r.createRate && r.backlog.end <= r.backlog.third * 1.1 + r.createRate * 0.1;
}

/** describeWebhookBench is one line per store, for the bench's output and docs/BENCHMARKS.md. */
export function describeWebhookBench(r: WebhookBenchResult): string {
  const n = (x: number) => Math.round(x).toLocaleString("en");
  const how = r.ratePerSecond ? `paced at ${r.ratePerSecond}/s` : `at ${r.connections} connections`;
  const variant = r.variant === "this" ? "" : ` (${r.variant})`;
  return `${r.store}${variant}: ${n(r.created)} creates in ${r.seconds.toFixed(0)} s ${how} (${n(r.createRate)}/s), events delivered ${n(r.deliveredRate)}/s during them; backlog ${n(r.backlog.third)} / ${n(r.backlog.twoThirds)} / ${n(r.backlog.end)} events at a third, two thirds and the end, drained ${Number.isFinite(r.drainMs) ? `${(r.drainMs / 1000).toFixed(1)} s` : "NOT"} after (${r.undelivered} never arrived); change to receipt p50 ${n(r.latency.p50Ms)} ms, p99 ${n(r.latency.p99Ms)} ms, max ${n(r.latency.maxMs)} ms; receiver: ${r.receiver.requests} requests, ${r.receiver.invalid} invalid, ${r.receiver.duplicates} duplicates, at most ${r.receiver.maxInFlight} at once; server CPU per create ${n(r.cpu.processUsPerCreate)} µs, its main thread ${n(r.cpu.mainThreadUsPerCreate)} µs (by thread: ${Object.entries(r.cpu.byThreadName).filter(([, us]) => us > 0).map(([name, us]) => `${name} ${n(us)}`).join(", ")})`;
}
