import pg from "pg";
import { queryDatabase } from "../../test/support/postgres.js";
import { errorMessages, isErrorBody, startCreateLoad, statusCounts, type LoadSample } from "../support/create-load.js";
import { verdict, type DrillReport } from "../support/drill-report.js";
import { fleetPoolMax, fleetStatementTimeoutMs, type Fleet } from "../support/fleet.js";
import { deliveryWorkerPoolMax } from "../../src/webhooks/threaded-delivery-engine.js";
import { watchReadiness } from "./readiness-watch.js";

export interface LocksOptions {
  /** Creates in flight at once through HAProxy while a lock is held. */
  concurrency: number;
  /** How long the row lock is held. */
  rowLockMs: number;
  /**
   * How long the table lock is held; at least minTableLockMs, so creates sent
   * after it was taken are also answered (503 at DB_LOCK_TIMEOUT_MS) before
   * it is released.
   */
  tableLockMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const unavailableMessage = "the database is unavailable; retry later";
/** The deadline, and 10 % on top for the balancer and a loaded machine. */
const boundMs = fleetStatementTimeoutMs * 1.1;
/** DB_LOCK_TIMEOUT_MS as the fleet runs (its default: 2 s, within the deadline). */
const lockTimeoutMs = Math.min(2000, fleetStatementTimeoutMs);
/**
 * The shortest table lock the checks can judge. Creates queued behind the
 * lock request were sent just before it was granted and answer at
 * lockTimeoutMs; the next ones, sent after it was taken, answer one
 * lockTimeoutMs later, and must do so before the release for "sent and
 * answered under the table lock" to see them: a third lockTimeoutMs leaves a
 * loaded machine its margin (at 4 s the check hung on a few milliseconds).
 */
export const minTableLockMs = 3 * lockTimeoutMs;

/** A session of its own, as psql would be (and named so: the backends count leaves it out), that takes a lock and holds it until released. */
async function holdLock(url: string, statement: string, params: unknown[] = []): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url, application_name: "psql" });
  await client.connect();
  await client.query("begin");
  await client.query(statement, params);
  return {
    release: async () => {
      await client.query("rollback");
      await client.end();
    },
  };
}

/**
 * runLocks holds, from a session of its own, first a row lock on one intent
 * while deletes of it come through HAProxy, then an ACCESS EXCLUSIVE lock on
 * payment_intents under a load of creates. Writes must answer 503 within the
 * deadline (+10 %), nothing answered 503 may be committed later, the
 * database's backends must stay within the instances' pools, and every
 * instance's /readyz must stay 200 (HAProxy takes none out).
 */
export async function runLocks(fleet: Fleet, options: LocksOptions): Promise<DrillReport> {
  const rest = `${fleet.haproxy.httpUrl}/v1`;
  const auth = { authorization: `Bearer ${fleet.merchant.key}` };
  const created = await fetch(`${rest}/v2/payment-intents`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ amount: 7000, customerEmail: "ada@example.com", clientReference: `locked-${Date.now()}` }),
  });
  const intent = (await created.json()) as { id: string };
  const downsBefore = await fleet.downs();
  const readiness = watchReadiness(fleet.instanceUrls);
  let maxBackends = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      maxBackends = Math.max(maxBackends, await fleet.backends());
      await sleep(250);
    }
  })();

  // Row lock: a delete of that intent waits for it up to DB_LOCK_TIMEOUT_MS, within the deadline.
  const row = await holdLock(fleet.db.url, "select 1 from payment_intents where id = $1 for update", [intent.id]);
  const rowAnswers: { status: number; ms: number; json: boolean; retryAfter: string | null }[] = [];
  const rowLockEnds = performance.now() + options.rowLockMs;
  while (performance.now() + lockTimeoutMs * 1.5 < rowLockEnds) {
    const t0 = performance.now();
    const res = await fetch(`${rest}/v2/payment-intents/${intent.id}`, { method: "DELETE", headers: auth });
    const body = await res.text();
    rowAnswers.push({ status: res.status, ms: performance.now() - t0, json: isErrorBody(res.status, body), retryAfter: res.headers.get("retry-after") });
  }
  await sleep(Math.max(0, rowLockEnds - performance.now()));
  await row.release();
  const afterRow = await fetch(`${rest}/v2/payment-intents/${intent.id}`, { headers: auth });
  const stillPending = afterRow.status === 200 && ((await afterRow.json()) as { status: string }).status === "pending";

  // Table lock: every create waits for it, or for a connection of a full pool, up to the deadline.
  const prefix = `tablelock-${Date.now()}`;
  const load = startCreateLoad({ restUrl: rest, key: fleet.merchant.key, concurrency: options.concurrency, prefix });
  await sleep(500);
  const table = await holdLock(fleet.db.url, "lock table payment_intents in access exclusive mode");
  const lockedAt = load.now();
  await sleep(Math.max(options.tableLockMs, minTableLockMs));
  const releasedAt = load.now();
  await table.release();
  await sleep(1000);
  await load.stop();
  sampling = false;
  await sampler;
  await readiness.stop();
  // Whatever was answered 503 must not have been committed since.
  await sleep(1000);
  // Every create the lock held up: in flight at some moment while it was held.
  const heldUp = load.samples.filter((s) => s.end > lockedAt && s.start < releasedAt);
  // Those sent while it was held and answered before the release could only fail; the others may
  // have committed before it was taken, or got it once released.
  const beforeRelease = heldUp.filter((s) => s.start >= lockedAt && s.end < releasedAt);
  const answered503 = heldUp.filter((s) => s.status === 503 && messageOf(s) === unavailableMessage);
  const { rows } = await queryDatabase<{ n: string }>(fleet.db.url, "select count(*) as n from payment_intents where client_reference = any($1)", [
    answered503.map((s) => s.reference),
  ]);
  const committedLater = Number(rows[0]!.n);
  const slowest = Math.max(0, ...heldUp.map((s) => s.end - s.start));
  const wrongDuringLock = [
    ...beforeRelease.filter((s) => s.status !== 503 || !isErrorBody(503, s.body)),
    ...heldUp.filter((s) => s.status !== 201 && s.status !== 503),
  ];
  const rowSlowest = Math.max(0, ...rowAnswers.map((a) => a.ms));
  const rowWrong = rowAnswers.filter((a) => a.status !== 503 || !a.json || a.retryAfter !== "1");
  const downs = (await fleet.downs()) - downsBefore;
  // Each instance's pool and its delivery worker's own (threaded-delivery-engine.ts).
  const poolsTotal = 3 * (fleetPoolMax + deliveryWorkerPoolMax(fleetPoolMax));
  const notReady = readiness.notReady();
  const { passed, failed } = verdict({
    "deletes were sent under the row lock": rowAnswers.length > 0,
    "every delete under the row lock answered 503 with the error body and Retry-After: 1": rowWrong.length === 0,
    "deletes answered within the bound": rowSlowest <= boundMs,
    "the row-locked intent still pending": stillPending,
    "creates were sent and answered under the table lock": beforeRelease.length > 0,
    [`creates under the table lock answered only 201 or 503 (${statusCounts(wrongDuringLock)})`]: wrongDuringLock.length === 0,
    "creates answered within the bound": slowest <= boundMs,
    "nothing answered 503 committed later": committedLater === 0,
    "backends within the pools": maxBackends <= poolsTotal,
    "/readyz 200 on every probe": notReady.length === 0,
    "HAProxy took no instance out": downs === 0,
  });
  const ms = (n: number) => `${Math.round(n)} ms`;
  return {
    name: "Fleet: row and table locks",
    did: `from a session of its own: a row lock on one intent for ${options.rowLockMs / 1000} s while deletes of it come through HAProxy, then ACCESS EXCLUSIVE on payment_intents for ${Math.max(options.tableLockMs, minTableLockMs) / 1000} s under ${options.concurrency} concurrent creates; DB_STATEMENT_TIMEOUT_MS=${fleetStatementTimeoutMs} and DB_LOCK_TIMEOUT_MS=${lockTimeoutMs} (the defaults), DB_POOL_MAX=${fleetPoolMax} (and ${deliveryWorkerPoolMax(fleetPoolMax)} for the delivery worker) on each of three instances; every instance's /readyz probed every 250 ms`,
    headline: `writes answered 503 within ${ms(Math.max(rowSlowest, slowest))} (bound ${ms(boundMs)}), ${committedLater} of ${answered503.length} committed later, at most ${maxBackends} backends (pools ${poolsTotal}), /readyz not 200 ${notReady.length} times in ${readiness.probes()} probes, HAProxy took instances out ${downs} times`,
    figures: [
      `row lock: ${rowAnswers.length} deletes answered ${statusCounts(rowAnswers)} after ${ms(Math.min(...rowAnswers.map((a) => a.ms)))}–${ms(rowSlowest)}, each with Retry-After: 1 and the error body: ${rowWrong.length === 0}; the intent still pending afterwards: ${stillPending}`,
      `table lock: ${heldUp.length} creates in flight while it was held: ${statusCounts(heldUp)}, slowest ${ms(slowest)}; of them sent and answered while it was held: ${statusCounts(beforeRelease)}; ${errorMessages(heldUp)}`,
      `whole load: ${statusCounts(load.samples)}`,
      ...(notReady.length ? [`not ready: ${notReady.slice(0, 5).join("; ")}`] : []),
    ],
    passed,
    failed,
  };
}

function messageOf(sample: LoadSample): string | undefined {
  try {
    return (JSON.parse(sample.body) as { message?: string }).message;
  } catch {
    return undefined;
  }
}
