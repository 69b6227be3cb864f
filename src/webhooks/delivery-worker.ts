import { parentPort, workerData } from "node:worker_threads";
import { createSecretBox } from "../lib/secret-box.js";
import { createSystemClock } from "../lib/clock.js";
import { createPinoLogger } from "../observability/pino-logger.js";
import type { DeliveryQueue } from "../store/delivery-queue.js";
import { createDeliveryEngine } from "./delivery-engine.js";
import { createWorkerDeliveryQueue } from "./queue-replica.js";
import { createRetryPolicy } from "./retry-policy.js";
import type { DeliveryWorkerData, FromWorker, ToWorker, WorkerMetric } from "./threaded-delivery-engine.js";
import type { WebhookMetrics } from "./webhook-metrics.js";
import { createWebhookSender } from "./webhook-sender.js";

/**
 * The delivery worker (threaded-delivery-engine.ts starts it): the same
 * engine, sender and policy as on the main thread, on this thread's own
 * event loop. Its log lines go to standard error from this thread (pino's
 * asynchronous destination writes the file descriptor itself, not through
 * the main thread). On PostgreSQL it opens its own pool; in memory it owns
 * the scheduling copy of the queue (queue-replica.ts), kept in step with the
 * main thread's over a port.
 */
const data = workerData as DeliveryWorkerData;
const port = parentPort!;
const logger = createPinoLogger({ level: data.log.level, pretty: data.log.pretty });
const clock = createSystemClock();

const pendingMetrics: WorkerMetric[] = [];
const metrics: WebhookMetrics = {
  attempt: (outcome, seconds) => pendingMetrics.push(["attempt", outcome, seconds]),
  delivery: (status, seconds) => pendingMetrics.push(["delivery", status, seconds]),
  queue: (stats, now) => pendingMetrics.push(["queue", stats, now]),
};
const flushMetrics = () => {
  if (pendingMetrics.length > 0) port.postMessage({ kind: "metrics", metrics: pendingMetrics.splice(0) } satisfies FromWorker);
};
const metricsTimer = setInterval(flushMetrics, 250);

let queue: DeliveryQueue;
let closeQueue = async () => {};
let wakeEngine = () => {};
if (data.database) {
  const { createDatabase } = await import("../store/postgres/database.js");
  const { createPostgresDeliveryQueue } = await import("../store/postgres/postgres-delivery-queue.js");
  const db = createDatabase({
    url: data.database.url,
    poolMax: data.database.poolMax,
    statementTimeoutMs: data.database.statementTimeoutMs,
    lockTimeoutMs: data.database.lockTimeoutMs,
    applicationName: "payment-intents webhooks",
    onReachabilityChange: (change) =>
      change.kind === "unreachable"
        ? logger.error({ component: "webhook delivery", reason: change.reason }, "the database is unreachable from the delivery worker")
        : logger.info({ component: "webhook delivery" }, "the database answers the delivery worker again"),
  });
  db.usePreparedStatements(data.database.preparedStatements);
  const key = data.database.secretKey;
  queue = createPostgresDeliveryQueue(db, { secretBox: createSecretBox({ key: key && Buffer.from(key) }) });
  closeQueue = () => db.close();
} else {
  const copy = createWorkerDeliveryQueue(data.queuePort!, data.snapshot!, () => wakeEngine());
  queue = copy;
  closeQueue = async () => copy.flush(true);
}

// Keep-alive pools of one endpoint's connections: as many as it may have attempts in flight.
const sender = createWebhookSender({
  timeoutMs: data.sender.timeoutMs,
  allowPrivate: data.sender.allowPrivate,
  connectionsPerEndpoint: data.engine.perEndpointConcurrency,
});
const engine = createDeliveryEngine({
  queue,
  sender,
  policy: createRetryPolicy({ schedule: data.retrySchedule }),
  clock,
  logger,
  metrics,
  ...data.engine,
});

wakeEngine = () => engine.wake();

port.on("message", (message: ToWorker) => {
  if (message.kind === "wake") engine.wake();
  else void stop();
});

let stopping: Promise<void> | undefined;
function stop() {
  stopping ??= (async () => {
    await engine.stop();
    await sender.close();
    await closeQueue().catch((error: unknown) => logger.error({ err: error }, "the delivery worker's database pool did not close cleanly"));
    clearInterval(metricsTimer);
    flushMetrics();
    logger.flush();
    port.postMessage({ kind: "stopped" } satisfies FromWorker);
  })();
  return stopping;
}

engine.start();
