import { errorMessages, isErrorBody, startCreateLoad, statusCounts } from "../support/create-load.js";
import type { DrillReport } from "../support/drill-report.js";
import type { Fleet } from "../support/fleet.js";
import { checkAcknowledged } from "./acknowledged.js";

export interface KillInstanceOptions {
  /** Creates in flight at once, through HAProxy. */
  concurrency: number;
  /** Load before the kill. */
  beforeMs: number;
  /** How long the instance stays dead. */
  downMs: number;
  /** Load after HAProxy has it back in service. */
  afterMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * runKillInstance: creates through HAProxy, SIGKILL of one instance in the
 * middle, a restart on its port, until HAProxy has it back. Every create
 * answered 2xx must be stored; every failure must be an answer in the API's
 * error shape (HAProxy's own included), never a reset.
 */
export async function runKillInstance(fleet: Fleet, options: KillInstanceOptions): Promise<DrillReport> {
  const prefix = `kill-${Date.now()}`;
  const load = startCreateLoad({ restUrl: `${fleet.haproxy.httpUrl}/v1`, key: fleet.merchant.key, concurrency: options.concurrency, prefix });
  await sleep(options.beforeMs);
  const killAt = load.now();
  await fleet.kill(1);
  await sleep(options.downMs);
  const restartAt = load.now();
  await fleet.restart(1);
  const listeningAt = load.now();
  await fleet.waitAllUp();
  const backAt = load.now();
  await sleep(options.afterMs);
  await load.stop();

  const samples = load.samples;
  const failed = samples.filter((s) => s.status < 200 || s.status >= 300);
  const inFlightAtKill = samples.filter((s) => s.start <= killAt && s.end >= killAt);
  const failedInFlight = inFlightAtKill.filter((s) => s.status < 200 || s.status >= 300);
  const notJson = failed.filter((s) => s.status !== 0 && !isErrorBody(s.status, s.body));
  const unanswered = failed.filter((s) => s.status === 0);
  const lastFailureEnd = Math.max(killAt, ...failed.filter((s) => s.end >= killAt).map((s) => s.end));
  const errorFreeAfterMs = failed.some((s) => s.end >= killAt) ? lastFailureEnd - killAt : 0;
  const replayed = samples.filter((s) => s.status === 200).length;
  const check = await checkAcknowledged(fleet.db.url, fleet.merchant.id, prefix, samples);
  const passed =
    check.acknowledged > 0 && check.missing.length === 0 && check.mismatched.length === 0 && notJson.length === 0 && unanswered.length === 0;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return {
    name: "Fleet: kill -9 an instance",
    did: `${options.concurrency} concurrent creates through HAProxy (deploy/haproxy.cfg) to three instances on PgBouncer (deploy/pgbouncer.ini); SIGKILL of one instance ${seconds(options.beforeMs)} in, restarted on its port ${seconds(options.downMs)} later, load until ${seconds(options.afterMs)} after HAProxy had it back`,
    headline: `${check.acknowledged} creates acknowledged, ${check.missing.length} missing; ${failedInFlight.length} of ${inFlightAtKill.length} requests in flight at the kill failed; error-free ${seconds(errorFreeAfterMs)} after the kill; ${unanswered.length} without an answer`,
    figures: [
      `answers: ${statusCounts(samples)} (200: a create HAProxy replayed on another instance after its first one committed and died: ${replayed})`,
      `errors: ${errorMessages(failed)}; not in the API's error shape: ${notJson.length}`,
      `instance restarted ${seconds(restartAt - killAt)} after the kill, listening ${seconds(listeningAt - restartAt)} later, back in HAProxy ${seconds(backAt - listeningAt)} after that (rise 2 × inter 1 s)`,
      `stored for creates that got no 2xx: ${check.storedUnacknowledged}; acknowledged but missing or different: ${check.missing.length}${check.missing.length ? ` (${check.missing.slice(0, 3).join(", ")})` : ""}; answers for another create: ${check.mismatched.length}`,
    ],
    passed,
  };
}
