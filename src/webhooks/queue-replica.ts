import type { MessagePort } from "node:worker_threads";
import type { DeliveryQueue } from "../store/delivery-queue.js";
import {
  createMemoryDeliveryQueue,
  type MemoryDeliveryQueue,
  type QueueChange,
  type QueueSnapshot,
  type QueueUpdate,
} from "../store/memory/memory-delivery-queue.js";

/** Messages on the port between the API's copy of the memory queue and the delivery worker's. */
export type ToReplica = { kind: "changes"; changes: QueueChange[] };
/** final: the worker's engine has stopped; nothing follows this update. */
export type FromReplica = { kind: "update"; update: QueueUpdate; final: boolean };

/** Whether a store's delivery queue is the memory one (memory mode), whose scheduling the worker can own. */
export function isMemoryDeliveryQueue(queue: DeliveryQueue): queue is MemoryDeliveryQueue {
  return typeof (queue as Partial<MemoryDeliveryQueue>).follow === "function";
}

/**
 * replicateToWorker hands the memory queue's scheduling to a delivery
 * worker (issue 21 §2): the worker's copy starts from the returned snapshot
 * and owns claims, leases and completions, so a delivery's cycle never
 * waits for this thread (whose loop the API keeps busy). This copy stays
 * what the API reads and writes: its changes (enqueues, endpoints, secrets,
 * retirement, retention) go to the worker in order, one message per turn of
 * this thread, and the worker's updates (attempts, states, endpoints'
 * failing state) are applied here as they come, one message per turn of the
 * worker's. The API therefore shows an attempt a turn or two after it was
 * made, and this thread does nothing per delivery but apply its update.
 *
 * A worker that dies loses its leases and the updates it had not sent: the
 * next one starts from a fresh snapshot, where those deliveries are pending,
 * and sends them again (at least once).
 */
export function replicateToWorker(
  queue: MemoryDeliveryQueue,
  port: MessagePort,
  onFinal: () => void,
): { snapshot: QueueSnapshot; stop(): void } {
  let changes: QueueChange[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (changes.length === 0) return;
    port.postMessage({ kind: "changes", changes } satisfies ToReplica);
    changes = [];
  };
  const snapshot = queue.snapshot();
  const unfollow = queue.follow((change) => {
    changes.push(change);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
  const onUpdate = (message: FromReplica) => {
    queue.applyUpdate(message.update);
    if (message.final) onFinal();
  };
  port.on("message", onUpdate);
  return {
    snapshot,
    stop() {
      port.off("message", onUpdate);
      unfollow();
    },
  };
}

/**
 * createWorkerDeliveryQueue is the delivery worker's copy of the memory
 * queue (replicateToWorker): the engine claims and completes on it in this
 * thread, and what each call changed goes back to the API's copy, batched
 * per turn. onChanges is called after the API's changes are applied (new
 * deliveries: the engine looks at once). flush(true) sends what is left,
 * marked final (the engine has stopped).
 */
export function createWorkerDeliveryQueue(
  port: MessagePort,
  snapshot: QueueSnapshot,
  onChanges: () => void,
): DeliveryQueue & { flush(final: boolean): void } {
  const copy = createMemoryDeliveryQueue({ trackChanges: true });
  copy.load(snapshot);
  let scheduled = false;
  const flush = (final = false) => {
    scheduled = false;
    const update = copy.takeUpdate();
    if (final || update.deliveries.length > 0 || update.endpoints.length > 0) port.postMessage({ kind: "update", update, final } satisfies FromReplica);
  };
  const changed = <T>(value: T): T => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => flush());
    }
    return value;
  };
  port.on("message", (message: ToReplica) => {
    for (const change of message.changes) replay(copy, change);
    onChanges();
  });
  return {
    claim: async (request) => changed(await copy.claim(request)),
    complete: async (completion) => changed(await copy.complete(completion)),
    settle: async (request) => changed(await copy.settle(request)),
    release: async (leases) => changed(await copy.release(leases)),
    stats: (now) => copy.stats(now),
    flush,
  };
}

/** Applies one of the API's changes to the worker's copy. */
function replay(queue: MemoryDeliveryQueue, change: QueueChange): void {
  switch (change.op) {
    case "enqueue":
      queue.enqueue(change.delivery);
      return;
    case "putEndpoint":
      queue.putEndpoint(change.endpoint);
      return;
    case "setSecrets":
      queue.setSecrets(change.endpointId, change.secrets);
      return;
    case "retire":
      queue.retireEndpoint(change.endpointId, change.at);
      return;
    case "forget":
      queue.forgetEnded(new Set(change.eventIds));
      return;
  }
}
