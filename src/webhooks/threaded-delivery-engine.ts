import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import type { Logger } from "../lib/logger.js";
import type { LogLevel } from "../observability/log-level.js";
import type { MemoryDeliveryQueue, QueueSnapshot } from "../store/memory/memory-delivery-queue.js";
import type { DeliveryEngine } from "./delivery-engine.js";
import { replicateToWorker } from "./queue-replica.js";
import type { WebhookMetrics } from "./webhook-metrics.js";

/**
 * deliveryWorkerPoolMax: the connections the delivery worker's own PostgreSQL
 * pool may open beside the instance's DB_POOL_MAX pool. A few suffice: its
 * claims and completions are short, and its sends hold no connection.
 */
export function deliveryWorkerPoolMax(instancePoolMax: number): number {
  return Math.min(instancePoolMax, 4);
}

/** What the worker builds its engine from: plain data, as workerData must be. */
export interface DeliveryWorkerData {
  log: { level: LogLevel; pretty: boolean };
  engine: { concurrency: number; perEndpointConcurrency: number; perMerchantConcurrency: number; pollIntervalMs: number; graceMs: number };
  sender: { timeoutMs: number; allowPrivate: boolean };
  retrySchedule: number[];
  /** PostgreSQL: the worker opens a pool of its own. Absent: the worker owns a copy of the memory queue (snapshot, queuePort). */
  database?: {
    url: string;
    poolMax: number;
    statementTimeoutMs: number;
    lockTimeoutMs: number;
    preparedStatements: boolean;
    /** WEBHOOK_SECRET_KEY, to open the endpoints' sealed secrets. */
    secretKey?: Uint8Array;
  };
  queuePort?: MessagePort;
  /** Memory mode: what the worker's copy of the queue starts from. */
  snapshot?: QueueSnapshot;
}

/** A metric the worker reports, batched to the main thread (where the registry is). */
export type WorkerMetric =
  | ["attempt", Parameters<WebhookMetrics["attempt"]>[0], number]
  | ["delivery", Parameters<WebhookMetrics["delivery"]>[0], number | null]
  | ["queue", Parameters<WebhookMetrics["queue"]>[0], Date];

/** Messages between the main thread and the delivery worker. */
export type ToWorker = { kind: "wake" } | { kind: "stop" };
export type FromWorker = { kind: "metrics"; metrics: WorkerMetric[] } | { kind: "stopped" };

export interface ThreadedDeliveryEngineOptions {
  /** The worker's settings; queuePort and snapshot are filled in here when queue is given. */
  data: Omit<DeliveryWorkerData, "queuePort" | "snapshot">;
  /** Memory mode: the main thread's queue, whose scheduling the worker takes over (queue-replica.ts). Unset with data.database. */
  queue?: MemoryDeliveryQueue;
  metrics: WebhookMetrics;
  /** For the worker's failures; the worker logs its attempts itself, to standard error. */
  logger: Logger;
}

/** The worker's first module (it registers tsx's loader when run from source): .ts from source, .js when built. */
const workerUrl = new URL(import.meta.url.endsWith(".ts") ? "./delivery-worker-boot.ts" : "./delivery-worker-boot.js", import.meta.url);

/**
 * createThreadedDeliveryEngine runs the delivery engine on a worker thread
 * (issue 21 §2): claims, signing, HTTP, completions and their log lines take
 * none of the API's event loop, so delivery keeps its pace however busy the
 * API is, and the API's latency does not carry delivery's work. The main
 * thread only posts a wake-up per event-loop turn with commits; in memory
 * mode the worker owns the queue's scheduling copy (queue-replica.ts: the
 * main thread posts its changes once a turn and applies the worker's
 * updates, and answers nothing per delivery); on PostgreSQL the worker has
 * its own pool and the main thread does nothing per delivery. Metrics come back in batches, four times a second, to the
 * main thread's registry.
 *
 * stop() asks the worker to stop its engine (attempts in flight get the
 * grace, then are cut and released) and waits for it, then ends the thread;
 * a worker that has not answered within the grace and 5 s more is
 * terminated (its leases run out and the deliveries are sent again). A
 * worker that fails is logged and started again a second later.
 */
export function createThreadedDeliveryEngine(options: ThreadedDeliveryEngineOptions): DeliveryEngine {
  const { data, queue, metrics, logger } = options;
  let worker: Worker | undefined;
  /** Signals stop() waits for: the worker's "stopped", and in memory mode its copy's final update. */
  let stopSignals = 0;
  let running = false;
  let wakeQueued = false;
  let stopped: (() => void) | undefined;

  function spawn() {
    const channel = queue ? new MessageChannel() : undefined;
    const replica = queue && channel ? replicateToWorker(queue, channel.port1, () => signal()) : undefined;
    const current = new Worker(workerUrl, {
      workerData: { ...data, queuePort: channel?.port2, snapshot: replica?.snapshot } satisfies DeliveryWorkerData,
      transferList: channel ? [channel.port2] : [],
      name: "webhook-delivery",
    });
    worker = current;
    current.on("message", (message: FromWorker) => {
      if (message.kind === "stopped") signal();
      else for (const metric of message.metrics) record(metric);
    });
    current.on("error", (error) => logger.error({ err: error }, "the webhook delivery worker failed"));
    current.on("exit", (code) => {
      replica?.stop();
      channel?.port1.close();
      stopped?.();
      if (worker === current) worker = undefined;
      if (running) {
        logger.error({ exitCode: code }, "the webhook delivery worker ended; starting it again in 1 s");
        setTimeout(() => running && !worker && spawn(), 1000).unref();
      }
    });
  }

  function signal() {
    stopSignals -= 1;
    if (stopSignals <= 0) stopped?.();
  }

  function record(metric: WorkerMetric) {
    if (metric[0] === "attempt") metrics.attempt(metric[1], metric[2]);
    else if (metric[0] === "delivery") metrics.delivery(metric[1], metric[2]);
    else metrics.queue(metric[1], metric[2]);
  }

  return {
    start() {
      if (running) return;
      running = true;
      spawn();
    },
    wake() {
      // One message per turn of the event loop, however many commits it had.
      if (!running || wakeQueued) return;
      wakeQueued = true;
      setImmediate(() => {
        wakeQueued = false;
        worker?.postMessage({ kind: "wake" } satisfies ToWorker);
      });
    },
    async stop() {
      running = false;
      const current = worker;
      if (!current) return;
      stopSignals = queue ? 2 : 1;
      const done = new Promise<void>((resolve) => (stopped = resolve));
      current.postMessage({ kind: "stop" } satisfies ToWorker);
      const cut = setTimeout(() => void current.terminate(), data.engine.graceMs + 5000);
      await done;
      clearTimeout(cut);
      await current.terminate();
    },
  };
}
