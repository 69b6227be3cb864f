import type { MessagePort } from "node:worker_threads";
import type { DeliveryQueue } from "../store/delivery-queue.js";

/** The DeliveryQueue methods a channel carries. */
type QueueMethod = "claim" | "complete" | "settle" | "release" | "stats";

interface QueueCall {
  id: number;
  method: QueueMethod;
  argument: unknown;
}

interface QueueAnswer {
  id: number;
  value?: unknown;
  /** The failure's message: the caller logs it as the engine logs any queue failure. */
  error?: string;
}

/**
 * serveDeliveryQueue answers, on its thread, the DeliveryQueue calls a
 * delivery worker sends over port (createChannelDeliveryQueue): in memory
 * mode the queue lives in the main thread's memory, so the worker sends and
 * signs while every claim and completion still runs to completion in one
 * thread, as the memory queue's atomicity needs. Dates and plain objects
 * cross as structured clones. Returns a function that stops serving.
 */
export function serveDeliveryQueue(queue: DeliveryQueue, port: MessagePort): () => void {
  const onCall = (call: QueueCall) => {
    let answer: Promise<unknown>;
    try {
      answer = (queue[call.method] as (argument: unknown) => Promise<unknown>)(call.argument);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      (value) => port.postMessage({ id: call.id, value } satisfies QueueAnswer),
      (error: unknown) => port.postMessage({ id: call.id, error: error instanceof Error ? error.message : String(error) } satisfies QueueAnswer),
    );
  };
  port.on("message", onCall);
  return () => port.off("message", onCall);
}

/** createChannelDeliveryQueue is the DeliveryQueue of a worker whose queue another thread serves (serveDeliveryQueue). */
export function createChannelDeliveryQueue(port: MessagePort): DeliveryQueue {
  let next = 0;
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  port.on("message", (answer: QueueAnswer) => {
    const call = waiting.get(answer.id);
    if (!call) return;
    waiting.delete(answer.id);
    if (answer.error !== undefined) call.reject(new Error(answer.error));
    else call.resolve(answer.value);
  });
  const send = <T>(method: QueueMethod, argument: unknown) =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      port.postMessage({ id, method, argument } satisfies QueueCall);
    });
  return {
    claim: (request) => send("claim", request),
    complete: (completion) => send("complete", completion),
    settle: (request) => send("settle", request),
    release: (leases) => send("release", leases),
    stats: (now) => send("stats", now),
  };
}
