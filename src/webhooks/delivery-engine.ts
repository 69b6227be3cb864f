import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Clock } from "../lib/clock.js";
import { createSystemClock } from "../lib/clock.js";
import type { Logger } from "../lib/logger.js";
import type { ClaimedDelivery, CompletionResult, DeliveryCompletion, DeliveryLease, DeliveryQueue } from "../store/delivery-queue.js";
import type { RetryPolicy } from "./retry-policy.js";
import { signWebhook } from "./signing.js";
import { liveSecrets } from "../domain/signing-secrets.js";
import { noWebhookMetrics, type WebhookMetrics } from "./webhook-metrics.js";
import type { SendResult, WebhookSender } from "./webhook-sender.js";

export interface DeliveryEngineOptions {
  queue: DeliveryQueue;
  sender: WebhookSender;
  policy: RetryPolicy;
  /**
   * The schedule clock: what is due, when a retry is due, which secrets are
   * live, the attempt's recorded time. The sandbox injects a clock it can move,
   * and the engine follows it within one poll interval.
   */
  clock: Clock;
  /**
   * The clock of the webhook-timestamp header: real time by default, whatever
   * the schedule clock says, because receivers check it against their own
   * clocks (standardwebhooks refuses one more than 5 minutes off) and would
   * refuse every delivery of a sandbox whose clock was moved ahead.
   */
  signingClock?: Clock;
  logger: Logger;
  metrics?: WebhookMetrics;
  /** Attempts in flight at once, over every endpoint (WEBHOOK_CONCURRENCY, default 32). */
  concurrency?: number;
  /** Attempts in flight at once to one endpoint, over every instance (WEBHOOK_CONCURRENCY_PER_ENDPOINT, default 4). */
  perEndpointConcurrency?: number;
  /**
   * Of this instance's slots, the most one merchant's attempts hold at once
   * (WEBHOOK_CONCURRENCY_PER_MERCHANT, default half of concurrency): a
   * merchant whose endpoints hang can never take every slot.
   */
  perMerchantConcurrency?: number;
  /** Real time between two looks at the queue (WEBHOOK_POLL_INTERVAL_MS, default 1000). */
  pollIntervalMs?: number;
  /**
   * How long a wake() may wait while attempts are in flight (default 50 ms):
   * their answers bring a claim sooner or later, and a claim at each commit
   * mostly finds the endpoints it would serve full (on PostgreSQL two round
   * trips each, ahead of the answers waiting to be recorded).
   */
  wakeDeferMs?: number;
  /** Claim lease; default the sender's timeout + 30 s, and never shorter than the timeout + 1 s. */
  leaseMs?: number;
  /** How long stop() lets attempts in flight finish before cutting them (default 10 s). */
  graceMs?: number;
  /** Real time between two refreshes of the queue gauges (default 15 s). */
  statsIntervalMs?: number;
  /** Names this instance on its claims (default host:pid:random). */
  instanceId?: string;
}

/** DeliveryEngine sends the queue's due deliveries until stopped. */
export interface DeliveryEngine {
  /** Starts polling; claims at once. */
  start(): void;
  /** Looks at the queue now (the outbox calls it after committing an event; the sandbox after moving its clock). */
  wake(): void;
  /**
   * Stops claiming, lets attempts in flight finish within the grace, then cuts
   * the rest and gives their leases back (they stay pending and are sent again
   * by whichever instance claims them next).
   */
  stop(): Promise<void>;
}

/** An answer waiting for the next settle() to record it. */
interface Answer {
  completion: DeliveryCompletion;
  resolve(result: CompletionResult): void;
  reject(error: unknown): void;
}

interface Flight {
  lease: DeliveryLease;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * createDeliveryEngine is the webhook delivery loop. It claims due deliveries
 * in batches of its free slots, sends each (signed with the endpoint's live
 * secrets) on its own, so a slow endpoint holds only its own slots, and
 * records the answers that came in since its last look together with its
 * next claim, in one settle() (issue 21 §2: one round trip to the store per
 * turn, not two per delivery): the queue never hands out more
 * than perEndpointConcurrency of one endpoint's deliveries at once (one while
 * it is failing), nor more than perMerchantConcurrency of this instance's
 * slots to one merchant, and takes merchants round-robin, so every other
 * slot keeps serving other merchants (issue 21, §1).
 *
 * It looks at the queue every pollIntervalMs of real time, on wake(), and
 * whenever an attempt ends (a slot is free). Because the queue decides due-ness
 * against clock.now() at each look, moving the injected clock forward makes
 * retries go out within one poll interval. Polling is what makes it correct on
 * several instances and after a crash; a wake-up is only a shortcut.
 *
 * One log line per attempt: event, delivery and endpoint ids, attempt number,
 * status code, duration, outcome, next state. Never the body, a header, a
 * signature, a secret or the URL (URLs can carry credentials in their query).
 */
export function createDeliveryEngine(options: DeliveryEngineOptions): DeliveryEngine {
  const { queue, sender, policy, clock, logger } = options;
  const signingClock = options.signingClock ?? createSystemClock();
  const metrics = options.metrics ?? noWebhookMetrics;
  const concurrency = options.concurrency ?? 32;
  const perEndpointLimit = options.perEndpointConcurrency ?? 4;
  const perMerchantLimit = Math.min(concurrency, options.perMerchantConcurrency ?? Math.max(1, Math.ceil(concurrency / 2)));
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const wakeDeferMs = options.wakeDeferMs ?? 50;
  const leaseMs = options.leaseMs ?? sender.timeoutMs + 30_000;
  const graceMs = options.graceMs ?? 10_000;
  const statsIntervalMs = options.statsIntervalMs ?? 15_000;
  const owner = options.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  if (!(concurrency >= 1 && perEndpointLimit >= 1 && perMerchantLimit >= 1)) throw new Error("webhook concurrency limits are at least 1");
  // A lease that can run out while its attempt is still within the timeout would let another instance send it too.
  if (leaseMs < sender.timeoutMs + 1000) throw new Error("the webhook claim lease must outlast the send timeout by at least 1 s");

  let running = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let statsTimer: NodeJS.Timeout | undefined;
  let filling: Promise<void> | undefined;
  let looking = false;
  let again = false;
  let deferred: NodeJS.Timeout | undefined;
  /** Attempts still sending, by lease token: the slots taken. */
  const flights = new Map<string, Flight>();
  /** Every attempt not finished yet, those whose completion is still being recorded included. */
  const attempts = new Set<Promise<void>>();
  /** Answers in, not yet handed to the queue: the next settle() records them. */
  let answers: Answer[] = [];

  /** A wake-up from outside (a commit, the sandbox's clock, the poll): deferred a little while attempts are in flight (wakeDeferMs). */
  function wake() {
    if (!running) return;
    if (flights.size === 0 || answers.length > 0) return look();
    deferred ??= setTimeout(() => {
      deferred = undefined;
      look();
    }, wakeDeferMs);
  }

  /**
   * Looks at the queue on the next turn, so the answers that came in this
   * turn go in one settle(); while one is out, once more after it.
   */
  function look() {
    // Stopping, the engine claims no more but still records the answers of attempts in flight.
    if (!running && answers.length === 0) return;
    if (filling || looking) {
      again = true;
      return;
    }
    looking = true;
    setImmediate(() => {
      looking = false;
      filling = fill().finally(() => {
        filling = undefined;
      });
    });
  }

  /**
   * Records the answers in and claims while there are free slots, the last
   * claim filled them all (more may be due) or answers came in meanwhile:
   * those of one turn go in one settle(), and answers that come while it is
   * out wait for the next, so a busy engine batches more per round trip.
   */
  async function fill() {
    do {
      again = false;
      const free = running ? concurrency - flights.size : 0;
      const batch = answers;
      if (free <= 0 && batch.length === 0) return;
      answers = [];
      if (free > 0) {
        // This claim serves whatever the deferred wake-up was for.
        clearTimeout(deferred);
        deferred = undefined;
      }
      let claimed: ClaimedDelivery[];
      try {
        const settled = await queue.settle({
          completions: batch.map((a) => a.completion),
          claim: free > 0 ? { now: clock.now(), owner, leaseMs, limit: free, perEndpointLimit, perMerchantLimit } : undefined,
        });
        batch.forEach((a, i) => a.resolve(settled.results[i]!));
        claimed = settled.claimed;
      } catch (error) {
        for (const a of batch) a.reject(error);
        if (free > 0) logger.error({ err: error }, "webhook deliveries could not be claimed; retrying at the next poll");
        if (answers.length > 0) continue;
        return;
      }
      if (!running) {
        if (claimed.length > 0) await queue.release(claimed.map((c) => c.lease)).catch(() => {});
        continue;
      }
      for (const delivery of claimed) launch(delivery);
      if (free > 0 && claimed.length === free) again = true;
    } while ((again && running) || answers.length > 0);
  }

  /**
   * A slot is free once the answer is in: the settle() that records it also
   * claims the next delivery, after the completion, so the slot it frees is
   * taken in the same round trip (issue 21 §2). stop() still waits for every
   * completion.
   */
  function launch(delivery: ClaimedDelivery) {
    const controller = new AbortController();
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      flights.delete(delivery.lease.token);
      look();
    };
    const done = attempt(delivery, controller.signal, free)
      .catch((error: unknown) => {
        // Not an answer from the endpoint but a fault here or in the queue: the
        // lease runs out and the delivery is tried again then.
        logger.error(
          { err: error, eventId: delivery.eventId, deliveryId: delivery.deliveryId, endpointId: delivery.endpoint.id },
          "webhook attempt could not be recorded; it is retried when its lease runs out",
        );
      })
      .finally(() => {
        attempts.delete(done);
        free();
      });
    attempts.add(done);
    flights.set(delivery.lease.token, { lease: delivery.lease, controller, done });
  }

  async function attempt(delivery: ClaimedDelivery, signal: AbortSignal, free: () => void) {
    const at = clock.now();
    const timestamp = Math.floor(signingClock.now().getTime() / 1000);
    const signature = signWebhook(liveSecrets(delivery.endpoint.secrets, at), delivery.eventId, timestamp, delivery.body);
    const result: SendResult = await sender.send({
      url: delivery.endpoint.url,
      headers: { "webhook-id": delivery.eventId, "webhook-timestamp": String(timestamp), "webhook-signature": signature },
      body: delivery.body,
      signal,
    });
    if (result.outcome === "aborted") {
      await queue.release([delivery.lease]);
      return;
    }
    metrics.attempt(result.outcome, result.durationMs / 1000);
    const number = delivery.attemptsMade + 1;
    const decision = policy.decide(result, number, clock.now());
    const completing = new Promise<CompletionResult>((resolve, reject) => {
      answers.push({
        completion: {
          lease: delivery.lease,
          attempt: { at, statusCode: result.statusCode, durationMs: result.durationMs, error: result.error },
          next: decision.next,
          endpoint: decision.endpoint,
        },
        resolve,
        reject,
      });
    });
    free();
    const completion = await completing;
    const fields = {
      eventId: delivery.eventId,
      deliveryId: delivery.deliveryId,
      endpointId: delivery.endpoint.id,
      attempt: number,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      outcome: result.outcome,
      error: result.error,
      // The operator's log only: never recorded on the delivery the merchant reads (issue 21, §5).
      ...(result.detail === undefined ? {} : { detail: result.detail }),
    };
    if (!completion.recorded) {
      logger.info({ ...fields, deliveryStatus: "unknown" }, "webhook attempt not recorded: its lease was taken over");
      return;
    }
    const nextAttemptAt = decision.next.status === "pending" && completion.status === "pending" ? decision.next.nextAttemptAt : null;
    logger.info({ ...fields, deliveryStatus: completion.status, nextAttemptAt }, "webhook attempt");
    if (completion.status !== "pending") {
      metrics.delivery(completion.status, (clock.now().getTime() - delivery.createdAt.getTime()) / 1000);
    }
    if (completion.endpointDisabled !== null) {
      for (let i = 0; i < completion.otherDeliveriesFailed; i++) metrics.delivery("failed", null);
      logger.info(
        { endpointId: delivery.endpoint.id, reason: completion.endpointDisabled, otherDeliveriesFailed: completion.otherDeliveriesFailed },
        completion.endpointDisabled === "gone" ? "webhook endpoint disabled: it answered 410 Gone" : "webhook endpoint disabled: failing for too long",
      );
    }
  }

  async function refreshStats() {
    const now = clock.now();
    try {
      metrics.queue(await queue.stats(now), now);
    } catch (error) {
      logger.error({ err: error }, "webhook queue figures could not be read");
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      pollTimer = setInterval(look, pollIntervalMs);
      statsTimer = setInterval(() => void refreshStats(), statsIntervalMs);
      pollTimer.unref();
      statsTimer.unref();
      void refreshStats();
      look();
    },
    wake,
    async stop() {
      running = false;
      clearTimeout(deferred);
      clearInterval(pollTimer);
      clearInterval(statsTimer);
      await filling;
      const grace = setTimeout(() => {
        for (const flight of flights.values()) flight.controller.abort();
      }, graceMs);
      await Promise.all([...attempts]);
      clearTimeout(grace);
    },
  };
}
