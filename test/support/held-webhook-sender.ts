import type { SendResult, WebhookRequest, WebhookSender } from "../../src/webhooks/webhook-sender.js";

/** HeldDelivery is one webhook POST the delivery engine made, waiting for the test to answer it. */
export interface HeldDelivery {
  readonly request: WebhookRequest;
  /** Ends the attempt with this result (durationMs and the rest default to an answer without error). */
  answer(result: Pick<SendResult, "outcome" | "statusCode"> & Partial<SendResult>): void;
}

/**
 * HeldWebhookSender stands for the merchants' webhook receivers in suites
 * that run the whole service: no request leaves the process, and each
 * attempt waits until the test answers it (or the engine stops and cuts it),
 * so the deliveries a suite reads stay as the outbox queued them unless it
 * answers.
 */
export interface HeldWebhookSender extends WebhookSender {
  /** The attempts in flight, oldest first. */
  readonly held: readonly HeldDelivery[];
  /** Resolves with the next attempt that is or will be in flight and not yet taken. */
  next(): Promise<HeldDelivery>;
}

export function createHeldWebhookSender(timeoutMs = 10_000): HeldWebhookSender {
  const held: HeldDelivery[] = [];
  const untaken: HeldDelivery[] = [];
  const waiting: ((delivery: HeldDelivery) => void)[] = [];
  return {
    timeoutMs,
    held,
    async close() {},
    next() {
      const ready = untaken.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    send(request) {
      return new Promise<SendResult>((resolve) => {
        const settle = (result: SendResult) => {
          const index = held.indexOf(delivery);
          if (index < 0) return;
          held.splice(index, 1);
          const queued = untaken.indexOf(delivery);
          if (queued >= 0) untaken.splice(queued, 1);
          resolve(result);
        };
        const delivery: HeldDelivery = {
          request,
          answer: (result) => settle({ retryAfterMs: null, durationMs: 1, error: null, ...result }),
        };
        held.push(delivery);
        request.signal?.addEventListener("abort", () => settle({ outcome: "aborted", statusCode: null, retryAfterMs: null, durationMs: 0, error: "aborted" }), {
          once: true,
        });
        const taker = waiting.shift();
        if (taker) taker(delivery);
        else untaken.push(delivery);
      });
    },
  };
}
