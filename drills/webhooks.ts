import { createTestDatabase, queryDatabase, type TestDatabase } from "../test/support/postgres.js";
import { startServerProcess, type ServerProcess } from "../test/support/server-process.js";
import type { DrillReport } from "./support/drill-report.js";
import { drillServerEnv, newDrillKey } from "./support/process-target.js";
import { percentileOf, startVerifyingReceiver, type VerifyingReceiver } from "./support/webhook-receiver.js";

/**
 * Settings of every webhook drill server: receivers on 127.0.0.1 over http,
 * a 50 ms poll, and a retry schedule of seconds (about 10 s of retries in
 * all) instead of hours, so an outage of a few seconds is retried through.
 */
const webhookEnv: Record<string, string> = {
  ...drillServerEnv,
  WEBHOOK_ALLOW_PRIVATE_URLS: "true",
  WEBHOOK_POLL_INTERVAL_MS: "50",
  WEBHOOK_RETRY_SCHEDULE: "200ms,500ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s",
  WEBHOOK_TIMEOUT_MS: "1000",
  SHUTDOWN_GRACE_MS: "500",
};

interface Merchant {
  id: string;
  key: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function call(server: ServerProcess, merchant: Merchant, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${merchant.key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000),
  });
}

/** registerEndpoint registers the receiver's URL for the merchant and gives the receiver the secret the answer shows once. */
async function registerEndpoint(server: ServerProcess, merchant: Merchant, receiver: VerifyingReceiver, description: string): Promise<string> {
  const res = await call(server, merchant, "POST", "/v2/webhook-endpoints", { url: receiver.url, description });
  const body = (await res.json()) as { id?: string; secret?: string };
  if (res.status !== 201 || !body.secret || !body.id) throw new Error(`registering the endpoint answered ${res.status} ${JSON.stringify(body)}`);
  receiver.setSecret(body.secret);
  return body.id;
}

interface Burst {
  /** Ids of the creates answered 2xx. */
  acknowledged: string[];
  /** Deletes answered 2xx (each a payment_intent.cancelled event). */
  cancelled: number;
  /** Answers that were neither 2xx nor a lost connection, a few kept. */
  unexpected: string[];
  unanswered: number;
}

/**
 * burst keeps `concurrency` creates in flight for durationMs (worker i on
 * servers[i % n]), at most ratePerSecond of them a second when given, and deletes every fourth acknowledged intent, so the
 * events are creations and status changes. A worker whose request got no
 * answer stops (its server is gone).
 */
async function burst(
  servers: ServerProcess[],
  merchant: Merchant,
  concurrency: number,
  durationMs: number,
  prefix: string,
  ratePerSecond?: number,
): Promise<Burst> {
  const result: Burst = { acknowledged: [], cancelled: 0, unexpected: [], unanswered: 0 };
  const began = performance.now();
  const until = began + durationMs;
  let sent = 0;
  const worker = async (index: number) => {
    const server = servers[index % servers.length]!;
    while (performance.now() < until) {
      const n = ++sent;
      // Paced: the n-th create no sooner than n / rate after the start.
      if (ratePerSecond) await sleep(began + (n * 1000) / ratePerSecond - performance.now());
      try {
        const res = await call(server, merchant, "POST", "/v2/payment-intents", {
          amount: 5000 + n,
          customerEmail: "ada@example.com",
          clientReference: `${prefix}-${n}`,
          paymentMethod: ["card"],
        });
        const text = await res.text();
        if (res.status !== 201) {
          result.unexpected.push(`create ${res.status} ${text.slice(0, 120)}`);
          continue;
        }
        const { id } = JSON.parse(text) as { id: string };
        result.acknowledged.push(id);
        if (n % 4 === 0) {
          const deleted = await call(server, merchant, "DELETE", `/v2/payment-intents/${id}`);
          await deleted.arrayBuffer();
          if (deleted.ok) result.cancelled++;
          else result.unexpected.push(`delete ${deleted.status}`);
        }
      } catch {
        result.unanswered++;
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
  return result;
}

/** recordedEvents reads the merchant's event ids from the database: what must be delivered. */
async function recordedEvents(db: TestDatabase, merchantId: string): Promise<{ id: string; paymentIntentId: string; type: string }[]> {
  const { rows } = await queryDatabase<{ id: string; payment_intent_id: string; type: string }>(
    db.url,
    "select id, payment_intent_id, type from events where merchant_id = $1",
    [merchantId],
  );
  return rows.map((r) => ({ id: r.id, paymentIntentId: r.payment_intent_id, type: r.type }));
}

/** waitDelivered polls until the receiver accepted every event recorded for the merchant; it resolves with those still missing at the timeout. */
async function waitDelivered(db: TestDatabase, merchantId: string, receiver: VerifyingReceiver, timeoutMs: number): Promise<{ events: number; missing: string[] }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const events = await recordedEvents(db, merchantId);
    const missing = events.filter((e) => !receiver.accepted.has(e.id)).map((e) => e.id);
    if (missing.length === 0 || performance.now() > deadline) return { events: events.length, missing };
    await sleep(100);
  }
}

/** deliveryRows sums the delivery rows of an endpoint: by status, and every attempt recorded. */
async function deliveryRows(db: TestDatabase, endpointId: string): Promise<{ succeeded: number; pending: number; failed: number; attempts: number }> {
  const { rows } = await queryDatabase<{ succeeded: string; pending: string; failed: string; attempts: string | null }>(
    db.url,
    `select count(*) filter (where status = 'succeeded') as succeeded, count(*) filter (where status = 'pending') as pending,
            count(*) filter (where status = 'failed') as failed, sum(jsonb_array_length(attempts)) as attempts
     from webhook_deliveries where endpoint_id = $1`,
    [endpointId],
  );
  const r = rows[0]!;
  return { succeeded: Number(r.succeeded), pending: Number(r.pending), failed: Number(r.failed), attempts: Number(r.attempts ?? 0) };
}

/** attemptLines counts the "webhook attempt" log lines a server process wrote: which instance sent how much. */
const attemptLines = (server: ServerProcess) => server.stderr().split("\n").filter((line) => line.includes('"msg":"webhook attempt"')).length;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const latency = (values: number[]) => `p50 ${percentileOf(values, 50).toFixed(0)} ms, p99 ${percentileOf(values, 99).toFixed(0)} ms, max ${percentileOf(values, 100).toFixed(0)} ms (${values.length} events)`;

/** withDrill runs a drill on a fresh database and cleans up every server and receiver it started. */
async function withDrill<T>(
  body: (ctx: { db: TestDatabase; merchant: Merchant; start(env?: Record<string, string>): Promise<ServerProcess>; receiver(delayMs?: number): Promise<VerifyingReceiver> }) => Promise<T>,
): Promise<T> {
  const db = await createTestDatabase();
  const merchant = { id: "webhooks", key: newDrillKey() };
  const servers: ServerProcess[] = [];
  const receivers: VerifyingReceiver[] = [];
  try {
    return await body({
      db,
      merchant,
      async start(env = {}) {
        const server = await startServerProcess({ databaseUrl: db.url, apiKeys: `${merchant.id}:${merchant.key}`, env: { ...webhookEnv, ...env } });
        servers.push(server);
        return server;
      },
      async receiver(delayMs) {
        const receiver = await startVerifyingReceiver({ delayMs });
        receivers.push(receiver);
        return receiver;
      },
    });
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(receivers.map((r) => r.close().catch(() => {})));
    await db.drop();
  }
}

export interface ReceiverOutageOptions {
  concurrency: number;
  burstMs: number;
  /** Half of it the receiver answers 503, the other half its port is closed. */
  outageMs: number;
}

/**
 * runReceiverOutage: a burst of creates and deletes while the receiver
 * answers 503 and then refuses connections, then comes back. Every event
 * recorded must be delivered and verified, none given up on.
 */
export async function runReceiverOutage(options: ReceiverOutageOptions): Promise<DrillReport> {
  return withDrill(async ({ db, merchant, start, receiver: newReceiver }) => {
    const server = await start();
    const receiver = await newReceiver();
    const endpointId = await registerEndpoint(server, merchant, receiver, "outage");
    // Delivery live first (its worker thread starts after the port opens): the outage must meet attempts, not a start-up.
    const warm = await call(server, merchant, "POST", "/v2/payment-intents", {
      amount: 5000,
      customerEmail: "ada@example.com",
      clientReference: "outage-warm",
      paymentMethod: ["card"],
    });
    await warm.arrayBuffer();
    for (let i = 0; i < 600 && receiver.counts().acknowledged === 0; i++) await sleep(100);
    const outage = (async () => {
      await sleep(500);
      receiver.setMode("unavailable");
      await sleep(options.outageMs / 2);
      await receiver.closeListener();
      await sleep(options.outageMs / 2);
      await receiver.reopen();
      receiver.setMode("ok");
      return Date.now();
    })();
    const load = await burst([server], merchant, options.concurrency, options.burstMs, "outage");
    const backAt = await outage;
    const answeredDuringOutage = receiver.counts().requests - receiver.counts().acknowledged;
    const { events, missing } = await waitDelivered(db, merchant.id, receiver, 60_000);
    const lastFirstReceipt = Math.max(...[...receiver.accepted.values()].map((e) => e.receivedAt));
    const drainMs = Math.max(0, lastFirstReceipt - backAt);
    const rows = await deliveryRows(db, endpointId);
    const c = receiver.counts();
    const passed =
      load.acknowledged.length > 0 && missing.length === 0 && c.invalid === 0 && rows.failed === 0 && answeredDuringOutage > 0 && load.unexpected.length === 0;
    return {
      name: "Webhooks: receiver outage",
      did: `${options.concurrency} concurrent creates for ${seconds(options.burstMs)} (every fourth deleted: a cancelled event) against a server process on PostgreSQL with one endpoint; 0.5 s in, the receiver answers 503 for ${seconds(options.outageMs / 2)}, then its port is closed for ${seconds(options.outageMs / 2)}, then it is back; retry schedule 200ms,500ms,1s ×10; every delivery verified with the standardwebhooks package`,
      headline: `${events} events recorded (${load.acknowledged.length} creates, ${load.cancelled} cancellations), ${events - missing.length} delivered, ${missing.length} missing, ${c.duplicates} duplicates, ${c.invalid} invalid signatures, drained ${seconds(drainMs)} after the receiver came back`,
      figures: [
        `attempts recorded: ${rows.attempts} for ${events} events (${(rows.attempts / Math.max(events, 1)).toFixed(2)} per event); ${answeredDuringOutage} answered 503 by the receiver, the rest of the failures refused connections`,
        `deliveries: ${rows.succeeded} succeeded, ${rows.pending} pending, ${rows.failed} failed; receiver: ${c.requests} requests, ${c.verified} verified, ${c.acknowledged} acknowledged, most in flight at once ${c.maxInFlight}`,
        `time to drain: the last first receipt came ${seconds(drainMs)} after the receiver's return`,
        ...(load.unexpected.length ? [`unexpected answers to the load: ${load.unexpected.slice(0, 3).join("; ")}`] : []),
        ...missing.slice(0, 3).map((id) => `missing: ${id}`),
      ],
      passed,
    };
  });
}

export interface WebhookCrashOptions {
  concurrency: number;
  burstMs: number;
}

/**
 * runWebhookCrash: creates and deletes with deliveries under way (the
 * receiver answers after 20 ms, so some are always in flight), SIGKILL of
 * the server mid-burst, a restart on the same database. Every event
 * recorded (each acknowledged create has one) must reach the receiver; the
 * deliveries the dead process had claimed wait for their lease (timeout +
 * 30 s) and may arrive twice.
 */
export async function runWebhookCrash(options: WebhookCrashOptions): Promise<DrillReport> {
  return withDrill(async ({ db, merchant, start, receiver: newReceiver }) => {
    const first = await start();
    const receiver = await newReceiver(20);
    await registerEndpoint(first, merchant, receiver, "crash");
    const killed = (async () => {
      await sleep(options.burstMs);
      first.child.kill("SIGKILL");
      return first.exited;
    })();
    const load = await burst([first], merchant, options.concurrency, options.burstMs + 5000, "crash");
    const how = await killed;
    const beforeRestart = receiver.accepted.size;
    const restartedAt = performance.now();
    await start();
    const restartMs = performance.now() - restartedAt;
    const waitStarted = Date.now();
    // The dead process's claims come back when their lease runs out: the timeout (1 s) + 30 s.
    const { events, missing } = await waitDelivered(db, merchant.id, receiver, 45_000);
    const lastFirstReceipt = Math.max(...[...receiver.accepted.values()].map((e) => e.receivedAt));
    const recorded = await recordedEvents(db, merchant.id);
    const createdFor = new Set(recorded.filter((e) => e.type === "payment_intent.created").map((e) => e.paymentIntentId));
    const ackedWithoutEvent = load.acknowledged.filter((id) => !createdFor.has(id));
    const c = receiver.counts();
    const passed = how === "SIGKILL" && load.acknowledged.length > 0 && missing.length === 0 && ackedWithoutEvent.length === 0 && c.invalid === 0;
    return {
      name: "Webhooks: kill -9 mid-delivery",
      did: `${options.concurrency} concurrent creates (every fourth deleted) for ${seconds(options.burstMs)} against a server process on PostgreSQL with one endpoint whose receiver answers after 20 ms, SIGKILL of the server mid-burst, restart on the same database; events read back with SQL`,
      headline: `${load.acknowledged.length} creates acknowledged, ${ackedWithoutEvent.length} of them without an event; ${events} events recorded, ${events - missing.length} delivered after the restart, ${missing.length} missing, ${c.duplicates} duplicates`,
      figures: [
        `killed by ${how}; ${load.unanswered} requests on the wire got no answer; ${beforeRestart} events delivered before the kill`,
        `restart ${seconds(restartMs)}; every event delivered ${seconds(Math.max(0, lastFirstReceipt - waitStarted))} after the restart (the dead process's claims wait for their lease: WEBHOOK_TIMEOUT_MS 1 s + 30 s)`,
        `receiver: ${c.requests} requests, ${c.verified} verified, ${c.invalid} invalid, ${c.duplicates} duplicates (sent by the dead process, then again after its lease ran out), most in flight at once ${c.maxInFlight}`,
        ...missing.slice(0, 3).map((id) => `missing: ${id}`),
        ...ackedWithoutEvent.slice(0, 3).map((id) => `acknowledged without an event: ${id}`),
      ],
      passed,
    };
  });
}

export interface TwoInstancesOptions {
  concurrency: number;
  burstMs: number;
}

/**
 * runTwoInstances: two server processes on one database, one endpoint, the
 * creates alternating between them. Every event delivered; the same
 * webhook-id never in flight twice at once; at most
 * WEBHOOK_CONCURRENCY_PER_ENDPOINT (4) requests at the receiver at once, over
 * both instances.
 */
export async function runTwoInstances(options: TwoInstancesOptions): Promise<DrillReport> {
  return withDrill(async ({ db, merchant, start, receiver: newReceiver }) => {
    const [one, two] = await Promise.all([start(), start()]);
    const receiver = await newReceiver(30);
    const endpointId = await registerEndpoint(one!, merchant, receiver, "two instances");
    const load = await burst([one!, two!], merchant, options.concurrency, options.burstMs, "two");
    const { events, missing } = await waitDelivered(db, merchant.id, receiver, 60_000);
    await sleep(300);
    const rows = await deliveryRows(db, endpointId);
    const c = receiver.counts();
    const sentBy = [attemptLines(one!), attemptLines(two!)];
    const passed = load.acknowledged.length > 0 && missing.length === 0 && c.concurrentSameId === 0 && c.maxInFlight <= 4 && c.invalid === 0 && load.unexpected.length === 0;
    return {
      name: "Webhooks: two instances",
      did: `two server processes on one PostgreSQL database, ${options.concurrency} concurrent creates (every fourth deleted) for ${seconds(options.burstMs)} alternating between them, one endpoint whose receiver answers after 30 ms`,
      headline: `${events} events, ${events - missing.length} delivered, ${missing.length} missing, ${c.concurrentSameId} times the same webhook-id in flight twice, ${c.duplicates} duplicates, at most ${c.maxInFlight} in flight at the endpoint (limit 4)`,
      figures: [
        `attempts sent by instance 1: ${sentBy[0]}, by instance 2: ${sentBy[1]} (their log lines); ${rows.attempts} recorded, ${rows.succeeded} deliveries succeeded, ${rows.pending} pending, ${rows.failed} failed`,
        `receiver: ${c.requests} requests, ${c.verified} verified, ${c.invalid} invalid`,
        ...missing.slice(0, 3).map((id) => `missing: ${id}`),
      ],
      passed,
    };
  });
}

export interface DeadEndpointOptions {
  concurrency: number;
  /** Creates a second: under what one endpoint is delivered at, so latency is the engine's, not a backlog's. */
  ratePerSecond: number;
  phaseMs: number;
}

/**
 * runDeadEndpoint: the healthy endpoint's delivery latency (event timestamp
 * to receipt) under a steady load, first alone, then with a second endpoint
 * of the same merchant that never answers (every attempt times out after
 * WEBHOOK_TIMEOUT_MS, then is retried). The dead endpoint may use its own
 * share (WEBHOOK_CONCURRENCY_PER_ENDPOINT) and no more: the healthy one's
 * p99 must stay within max(2×, +250 ms) of the run without it.
 */
export async function runDeadEndpoint(options: DeadEndpointOptions): Promise<DrillReport> {
  return withDrill(async ({ db, merchant, start, receiver: newReceiver }) => {
    const server = await start();
    const healthy = await newReceiver();
    const dead = await newReceiver();
    dead.setMode("hang");
    await registerEndpoint(server, merchant, healthy, "healthy");
    // A second of the same load first, uncounted: the first deliveries of a fresh process are slower (JIT, pools).
    await burst([server], merchant, options.concurrency, 1000, "warm", options.ratePerSecond);
    const phase = async (label: string) => {
      const from = Date.now();
      const load = await burst([server], merchant, options.concurrency, options.phaseMs, label, options.ratePerSecond);
      const to = Date.now();
      const { missing } = await waitDelivered(db, merchant.id, healthy, 30_000);
      const latencies = [...healthy.accepted.values()].filter((e) => e.eventAt >= from && e.eventAt <= to).map((e) => e.receivedAt - e.eventAt);
      return { load, missing, latencies };
    };
    const alone = await phase("alone");
    const deadId = await registerEndpoint(server, merchant, dead, "dead");
    const beside = await phase("beside");
    const deadRows = await deliveryRows(db, deadId);
    const c = healthy.counts();
    const p99Alone = percentileOf(alone.latencies, 99);
    const p99Beside = percentileOf(beside.latencies, 99);
    const bound = Math.max(2 * p99Alone, p99Alone + 250);
    const passed =
      alone.missing.length === 0 && beside.missing.length === 0 && beside.latencies.length > 0 && p99Beside <= bound && dead.counts().requests > 0 && c.invalid === 0;
    return {
      name: "Webhooks: dead endpoint beside a healthy one",
      did: `one server process on PostgreSQL, one merchant, ${options.ratePerSecond} creates a second (every fourth deleted) for ${seconds(options.phaseMs)} (after an uncounted second of it) with one healthy endpoint, then the same with a second endpoint that never answers (WEBHOOK_TIMEOUT_MS 1 s, retried from 200 ms on); latency from the event's timestamp to its receipt at the healthy endpoint`,
      headline: `healthy endpoint p99 ${p99Beside.toFixed(0)} ms beside the dead one vs ${p99Alone.toFixed(0)} ms alone (bound ${bound.toFixed(0)} ms), ${alone.missing.length + beside.missing.length} healthy deliveries missing`,
      figures: [
        `alone: ${latency(alone.latencies)}`,
        `beside the dead endpoint: ${latency(beside.latencies)}`,
        `dead endpoint: ${dead.counts().requests} requests reached it, most in flight at once ${dead.counts().maxInFlight} (limit 4); its deliveries ${deadRows.pending} pending, ${deadRows.failed} failed, ${deadRows.attempts} attempts recorded`,
        `healthy receiver: ${c.requests} requests, ${c.verified} verified, ${c.invalid} invalid, ${c.duplicates} duplicates`,
      ],
      passed,
    };
  });
}

export interface NoisyNeighbourOptions {
  /** Intents merchant A creates at the start, each one delivery per dead endpoint (32 × 16 = 512 pending). */
  noisyIntents: number;
  /** How long merchant B creates one intent a second. */
  phaseMs: number;
  /** WEBHOOK_TIMEOUT_MS: how long each of A's attempts holds its slot. */
  timeoutMs: number;
}

/**
 * runNoisyNeighbour (issue 21, §1): merchant A registers 16 endpoints that
 * accept TCP and never answer and creates intents until 500+ deliveries are
 * pending; merchant B, with one healthy endpoint, creates one intent a
 * second. B's change-to-receipt p99 must be ≤ 1 s and none of its deliveries
 * may wait behind A's (every B latency ≤ 1 s), on the memory stores (one
 * process) and on PostgreSQL with two instances (B's creates alternating).
 */
export async function runNoisyNeighbour(options: NoisyNeighbourOptions): Promise<DrillReport[]> {
  const reports: DrillReport[] = [];
  for (const store of ["memory", "postgres"] as const) {
    const db = store === "postgres" ? await createTestDatabase() : undefined;
    const noisy: Merchant = { id: "noisy", key: newDrillKey() };
    const quiet: Merchant = { id: "quiet", key: newDrillKey() };
    const servers: ServerProcess[] = [];
    const receivers: VerifyingReceiver[] = [];
    try {
      const env = { ...webhookEnv, WEBHOOK_TIMEOUT_MS: String(options.timeoutMs) };
      const apiKeys = `${noisy.id}:${noisy.key},${quiet.id}:${quiet.key}`;
      for (let i = 0; i < (store === "postgres" ? 2 : 1); i++) {
        servers.push(await startServerProcess({ databaseUrl: db?.url, apiKeys, env }));
      }
      const dead: VerifyingReceiver[] = [];
      for (let i = 0; i < 16; i++) {
        const r = await startVerifyingReceiver();
        r.setMode("hang");
        receivers.push(r);
        dead.push(r);
        await registerEndpoint(servers[0]!, noisy, r, `dead ${i}`);
      }
      const healthy = await startVerifyingReceiver();
      receivers.push(healthy);
      await registerEndpoint(servers[0]!, quiet, healthy, "healthy");
      for (let i = 0; i < options.noisyIntents; i++) {
        const res = await call(servers[i % servers.length]!, noisy, "POST", "/v2/payment-intents", {
          amount: 5000 + i,
          customerEmail: "ada@example.com",
          clientReference: `noisy-${i}`,
        });
        await res.arrayBuffer();
      }
      const from = Date.now();
      const load = await burst(servers, quiet, 1, options.phaseMs, "quiet", 1);
      const expected = load.acknowledged.length + load.cancelled;
      const deadline = performance.now() + 15_000;
      while (healthy.accepted.size < expected && performance.now() < deadline) await sleep(100);
      const latencies = [...healthy.accepted.values()].filter((e) => e.eventAt >= from).map((e) => e.receivedAt - e.eventAt);
      const deadRequests = dead.reduce((sum, r) => sum + r.counts().requests, 0);
      const deadMaxInFlight = Math.max(...dead.map((r) => r.counts().maxInFlight));
      const p99 = percentileOf(latencies, 99);
      const worst = percentileOf(latencies, 100);
      const missing = expected - healthy.accepted.size;
      const c = healthy.counts();
      const passed = load.acknowledged.length > 0 && missing <= 0 && p99 <= 1000 && worst <= 1000 && deadRequests > 0 && c.invalid === 0;
      const instances = servers.length === 1 ? "one server process on the memory stores" : "two server processes on one PostgreSQL database";
      reports.push({
        name: `Webhooks: noisy neighbour (${store})`,
        did: `${instances}; merchant A registers 16 endpoints that accept TCP and never answer (WEBHOOK_TIMEOUT_MS ${options.timeoutMs} ms, retried from 200 ms on) and creates ${options.noisyIntents} intents (${options.noisyIntents * 16} deliveries); then merchant B creates one intent a second for ${seconds(options.phaseMs)} (every fourth deleted)${servers.length > 1 ? ", alternating between the instances" : ""}; latency from B's event timestamp to its receipt`,
        headline: `merchant B p99 ${p99.toFixed(0)} ms, max ${worst.toFixed(0)} ms (bound 1000 ms), ${Math.max(0, missing)} of ${expected} missing, beside ${deadRequests} requests hanging at A's endpoints`,
        figures: [
          `merchant B: ${latency(latencies)}; receiver ${c.requests} requests, ${c.verified} verified, ${c.invalid} invalid`,
          `merchant A: ${deadRequests} attempts reached its 16 dead endpoints, most in flight at one endpoint ${deadMaxInFlight}`,
        ],
        passed,
      });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await Promise.all(receivers.map((r) => r.close().catch(() => {})));
      await db?.drop();
    }
  }
  return reports;
}
