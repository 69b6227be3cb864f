import type { SigningSecret } from "../domain/signing-secrets.js";

/**
 * DeliveryQueue is the port between the webhook delivery engine and the
 * store that holds deliveries (one per event and endpoint, README, Webhooks).
 * The engine only ever claims due deliveries, sends them, and completes them;
 * everything that must be atomic happens inside one call here, so the same
 * engine runs on the in-memory queue (memory-delivery-queue.ts) and on
 * PostgreSQL, with one instance or many.
 *
 * What an implementation must guarantee:
 *
 * 1. Deliveries are created with their event. The outbox inserts one pending
 *    delivery per (event, enabled endpoint taking the event's type) in the
 *    same transaction that records the event and the change it reports, with
 *    nextAttemptAt = the event's time (due at once). A committed event is
 *    therefore never without its deliveries, and a rolled-back change never
 *    has any. Pending deliveries survive restarts and `kill -9`: they are
 *    rows, not timers.
 *
 * 2. Claims are exclusive and leased. claim() marks each row it returns with
 *    the owner, a fresh lease token and a lease expiry, and returns only rows
 *    that are pending, due (nextAttemptAt <= request.now), whose endpoint is
 *    enabled, and that are not under another unexpired lease. A due, unleased
 *    delivery whose endpoint is disabled (enqueued as the endpoint was being
 *    disabled) is ended as failed, without an attempt, by the claim that
 *    finds it, so it never sits pending for ever. Two claims, on
 *    any instances, never return the same delivery while its lease runs. A
 *    lease that expires (its owner crashed or hung) makes the row claimable
 *    again, and it is sent again: delivery is at least once.
 *    Leases are measured on the implementation's own clock (PostgreSQL:
 *    `now()` of the database, so instances with skewed clocks agree; memory: a
 *    monotonic clock), never on request.now: the sandbox's injected clock may
 *    jump hours ahead, and that must make retries due, not leases of
 *    deliveries in flight expire.
 *    On PostgreSQL: in one transaction, lock the candidate endpoints
 *    (`select … from webhook_endpoints where status = 'enabled' and id in
 *    (endpoints with due, unleased deliveries) order by merchant_id, id for
 *    no key update`, so two instances never count the same endpoint's slots
 *    at once), count each endpoint's unexpired leases, then take at most
 *    perEndpointLimit − that count of its due deliveries, oldest
 *    nextAttemptAt first, up to limit in all, `for update skip locked`, and
 *    set owner, token and `lease_expires_at = now() + leaseMs`. The endpoint
 *    lock waits rather than skips: with `skip locked` there, claimers that
 *    meet at once each see the others' endpoints as absent and take a
 *    fraction of what is due (8 concurrent claims took 10 of 30). Taking
 *    the locks in key order keeps claims from deadlocking, and `no key
 *    update` lets the outbox's inserts (which reference the endpoint) go on
 *    while a claim holds it. Use an index on
 *    (next_attempt_at) where status = 'pending'. Poll; LISTEN/NOTIFY may
 *    only be an extra trigger (the engine has wake()).
 *
 * 3. Per-endpoint concurrency counts every instance. A claim never leaves an
 *    endpoint with more than perEndpointLimit deliveries under unexpired
 *    leases, whoever holds them, so a slow or dead endpoint holds at most that
 *    many of the engine's slots, and its backlog never hides other
 *    endpoints' due deliveries from a claim (the limit applies per endpoint,
 *    then the overall limit).
 *
 * 4. Completion is atomic and fenced by the lease token. complete() records
 *    the attempt, sets the delivery's next state, applies the endpoint effect
 *    and releases the lease in one transaction, and only while the row still
 *    carries that token (a lease that ran out but was not claimed again is
 *    still ours; one claimed again by another instance is not, and then
 *    nothing is written and the answer is {recorded: false}).
 *    The endpoint effect is applied to the endpoint row as it is at that
 *    moment, never from what claim() saw: "succeeded" clears failingSince;
 *    "failed" sets failingSince to the attempt's time when it is null, then
 *    disables the endpoint (reason "failing") when failingSince <=
 *    disableIfFailingSince; "gone" disables it (reason "gone"). When the
 *    endpoint is disabled (by this completion or before), a "pending" next
 *    state becomes "failed", and when this completion disables it, every
 *    other pending delivery of the endpoint not under an unexpired lease ends
 *    as failed too (those in flight end when they complete).
 *
 * 5. release() drops leases without an attempt (the engine stopping before
 *    an answer came): the delivery stays pending and is claimable at once.
 *
 * 6. Fair across merchants and endpoints (issue 21, §1). One claim takes due
 *    deliveries round-robin over merchants: every merchant's oldest due
 *    first, then every merchant's second, and so on (ties by nextAttemptAt,
 *    createdAt, id), so a merchant with hundreds due never hides another's
 *    one. A merchant holds at most perMerchantLimit of the claiming owner's
 *    leases, so it never takes all of an instance's slots. A failing
 *    endpoint (failingSince set) gets one delivery in flight at a time, and
 *    one that timed out or refused pauses (EndpointEffect.pauseUntil): a
 *    dead endpoint costs one slot per retry, not one per pending delivery.
 *
 * 7. settle() is complete() for each of a batch, in order, then claim(),
 *    in one call: one round trip to the store for a whole turn of the
 *    engine's answers and its next claim (issue 21 §2: one delivery's cycle
 *    must not wait on a round trip of its own, nor on the API's event loop
 *    twice). Each completion keeps 4's guarantees (atomic, fenced by its own
 *    token; results[i] is what complete() would have answered) and the claim
 *    runs after them, so the slots they free are taken in the same call. A
 *    settle that fails may have recorded none of its completions: their
 *    leases run out and those deliveries are sent again (at least once).
 *
 * Secrets leave the store decrypted only through claim() (SecretBox opens
 * them; secret-box.ts). Bodies are stored once per event and never logged.
 */
export interface DeliveryQueue {
  /** Claims up to request.limit due deliveries for request.owner (see 2 and 3 above). */
  claim(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /** Records one attempt and what follows it, atomically, if the lease is still ours (see 4). */
  complete(completion: DeliveryCompletion): Promise<CompletionResult>;
  /** Completes each of request.completions in order, then claims with request.claim when given (see 7). */
  settle(request: SettleRequest): Promise<SettleResult>;
  /** Gives leases back without an attempt (see 5). Leases no longer ours are ignored. */
  release(leases: readonly DeliveryLease[]): Promise<void>;
  /** Queue figures for the metrics, at the schedule time now. */
  stats(now: Date): Promise<QueueStats>;
}

/** ClaimRequest: what one engine asks for in one round. */
export interface ClaimRequest {
  /** The schedule's now (the injected clock): a delivery is due when nextAttemptAt <= now. */
  now: Date;
  /** Who claims: an instance name, kept on the row for operators. */
  owner: string;
  /** How long the lease lasts, on the implementation's own clock. Longer than a whole attempt. */
  leaseMs: number;
  /** At most this many deliveries in all (the engine's free slots). */
  limit: number;
  /**
   * At most this many deliveries under unexpired leases per endpoint,
   * counting every owner's; 1 while the endpoint is failing (its
   * failingSince is set): one probe at a time, a half-open circuit (see 6).
   */
  perEndpointLimit: number;
  /**
   * At most this many of request.owner's unexpired leases per merchant: a
   * merchant's share of the claiming instance's slots (see 6). Default: limit.
   */
  perMerchantLimit?: number;
}

/** SettleRequest: one turn of the engine, its answers to record and, when it has free slots, its claim. */
export interface SettleRequest {
  completions: readonly DeliveryCompletion[];
  claim?: ClaimRequest;
}

/** SettleResult: one result per completion, in order, and what the claim took (empty without one). */
export interface SettleResult {
  results: CompletionResult[];
  claimed: ClaimedDelivery[];
}

/** ClaimedDelivery is everything one attempt needs, read in the claim. */
export interface ClaimedDelivery {
  /** "whd_" + UUIDv7. */
  deliveryId: string;
  /** The webhook-id header: the same on every attempt and every endpoint, so receivers de-duplicate. */
  eventId: string;
  eventType: string;
  /** The event's JSON exactly as signed and sent; rendered once, when the event was recorded. */
  body: string;
  /** Attempts recorded before this one (0 for the first). A lease that expired adds none. */
  attemptsMade: number;
  /** When the delivery was created (the event's time): the delivery latency metric starts here. */
  createdAt: Date;
  /** The endpoint, as it is at the claim; claim only returns deliveries of enabled endpoints. */
  endpoint: DeliveryEndpoint;
  lease: DeliveryLease;
}

/** DeliveryEndpoint is the part of a webhook endpoint a delivery needs. */
export interface DeliveryEndpoint {
  /** "we_" + UUIDv7. */
  id: string;
  /** The registered URL (normalised, checked at registration; its address is checked again at delivery). */
  url: string;
  /** Decrypted, current first, with their expiry (rotation: signing-secrets.ts). */
  secrets: SigningSecret[];
}

/** DeliveryLease identifies one claim of one delivery; the token fences completion. */
export interface DeliveryLease {
  deliveryId: string;
  /** Unique per claim: a delivery claimed again gets a new token, and the old one no longer completes it. */
  token: string;
}

/** DeliveryAttempt is one try, as recorded and shown: never a body, header or secret. */
export interface DeliveryAttempt {
  /** When it was made, on the schedule clock. */
  at: Date;
  /** The endpoint's HTTP status; null when no answer came. */
  statusCode: number | null;
  /** Real time from the start of the DNS lookup to the answer (or the failure). */
  durationMs: number;
  /** Why it failed, when no status explains it (a timeout, a refused connection or address); else null. */
  error: string | null;
}

/** DeliveryStatus: pending until a 2xx (succeeded) or the end of the schedule (failed). */
export type DeliveryStatus = "pending" | "succeeded" | "failed";

/** NextDeliveryState: where a delivery goes after an attempt. */
export type NextDeliveryState =
  | { status: "succeeded" }
  | { status: "failed" }
  | { status: "pending"; nextAttemptAt: Date };

/** EndpointEffect: what an attempt says about its endpoint (applied atomically, see 4). */
export type EndpointEffect =
  | { kind: "succeeded" }
  | {
      kind: "failed";
      /** The attempt's time: failingSince when the endpoint was not failing yet. */
      at: Date;
      /** Disable the endpoint when it has been failing since this time or earlier (5 days before at). */
      disableIfFailingSince: Date;
      /**
       * The endpoint timed out or refused: its other pending deliveries not
       * under an unexpired lease and due before this time are not attempted
       * before it (their nextAttemptAt moves to it, no attempt recorded), so
       * a dead endpoint stops taking slots until its next retry (see 6).
       */
      pauseUntil?: Date;
    }
  | { kind: "gone" };

/** DisabledReason: why an endpoint stopped receiving (410 Gone, or failing continuously too long). */
export type DisabledReason = "gone" | "failing";

/** DeliveryCompletion: one attempt and its consequences. */
export interface DeliveryCompletion {
  lease: DeliveryLease;
  attempt: DeliveryAttempt;
  next: NextDeliveryState;
  endpoint: EndpointEffect;
}

/** CompletionResult: whether complete() wrote, and what it decided. */
export type CompletionResult =
  | { recorded: false }
  | {
      recorded: true;
      /** The delivery's status now ("failed" instead of "pending" when the endpoint is disabled). */
      status: DeliveryStatus;
      /** Set when this completion disabled the endpoint. */
      endpointDisabled: DisabledReason | null;
      /** Other pending deliveries of the endpoint this completion ended as failed (it disabled the endpoint). */
      otherDeliveriesFailed: number;
    };

/** QueueStats: figures for payments_webhook_queue_depth and payments_webhook_oldest_pending_seconds. */
export interface QueueStats {
  /** Pending deliveries, in flight included. */
  pending: number;
  /** Of those, how many are due (nextAttemptAt <= now): a backlog when it stays high. */
  due: number;
  /** createdAt of the oldest pending delivery; null when none is pending. */
  oldestPendingCreatedAt: Date | null;
}
