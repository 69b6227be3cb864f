import { randomUUID } from "node:crypto";
import type {
  ClaimedDelivery,
  ClaimRequest,
  DeliveryCompletion,
  CompletionResult,
  DeliveryAttempt,
  DeliveryQueue,
  DeliveryStatus,
  DisabledReason,
} from "../delivery-queue.js";
import type { SigningSecret } from "../../domain/signing-secrets.js";
import { createOrderedHeap, type OrderedHeap } from "./ordered-heap.js";

/** MemoryEndpoint is an endpoint as the memory queue keeps it. */
export interface MemoryEndpoint {
  id: string;
  /** Whose endpoint: claims share slots by merchant. Absent (queue tests), endpoints share one unnamed merchant. */
  merchantId?: string;
  url: string;
  /** Current first; plain (a process's memory is not "at rest"). */
  secrets: SigningSecret[];
  status: "enabled" | "disabled";
  disabledReason: DisabledReason | null;
  /** When the current run of failures began; null after a success. */
  failingSince: Date | null;
}

/** NewDelivery: one event for one endpoint, as the outbox enqueues it. */
export interface NewDelivery {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  /** The event's JSON, exactly as it will be signed and sent. */
  body: string;
  createdAt: Date;
  /** Default: createdAt (due at once). */
  nextAttemptAt?: Date;
}

/** DeliveryRecord: a delivery with its attempts, as the API will list it. */
export interface DeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  body: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** Null once the delivery has ended. */
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** The current claim; expiresAt is on the queue's lease clock (milliseconds). */
  lease: { owner: string; token: string; expiresAt: number } | null;
}

/** MemoryDeliveryQueue is the DeliveryQueue of memory mode, plus what the memory outbox and tests need. */
export interface MemoryDeliveryQueue extends DeliveryQueue {
  /** Adds or replaces an endpoint (status and failing state default to enabled, not failing). */
  putEndpoint(endpoint: Pick<MemoryEndpoint, "id" | "url" | "secrets"> & Partial<MemoryEndpoint>): void;
  /** A copy of an endpoint's state. */
  endpoint(id: string): MemoryEndpoint | undefined;
  /** Adds a pending delivery; its endpoint must exist and its id be new. */
  enqueue(delivery: NewDelivery): void;
  /** A copy of one delivery. */
  delivery(id: string): DeliveryRecord | undefined;
  /** Copies of every delivery, oldest first. */
  deliveries(): DeliveryRecord[];
  /** Copies of one endpoint's deliveries, in the order they were enqueued. */
  deliveriesOf(endpointId: string): DeliveryRecord[];
  /** Replaces an endpoint's secrets (a rotation), leaving the rest of its state as it is. false: no such endpoint. */
  setSecrets(endpointId: string, secrets: SigningSecret[]): boolean;
  /**
   * Retires an endpoint (its deletion): it is disabled, so no claim returns
   * its deliveries again and one in flight that does not succeed ends as
   * failed when it completes, and every pending delivery not under an
   * unexpired lease ends as failed now. Returns how many ended.
   */
  retireEndpoint(endpointId: string, at: Date): number;
  /**
   * Retention: of the given events, those with no pending delivery lose
   * their deliveries; returns those events' ids (the ones the caller may
   * delete). Events with a pending delivery are left whole.
   */
  forgetEnded(eventIds: ReadonlySet<string>): Set<string>;
  /**
   * Makes this queue the API's copy of one a delivery worker owns
   * (src/webhooks/queue-replica.ts): each change the API makes (enqueue,
   * endpoints, secrets, retirement, retention) is also given to listener, in
   * order, for the worker's copy, and this copy no longer schedules (it keeps
   * no due-time heaps and is never claimed from). Returns a function that
   * stops following.
   */
  follow(listener: (change: QueueChange) => void): () => void;
  /** The API's copy: applies what the worker's copy changed (takeUpdate()); unknown ids are ignored. */
  applyUpdate(update: QueueUpdate): void;
  /** With trackChanges: what changed since the last call (attempts, states, endpoints' failing state), for the API's copy. */
  takeUpdate(): QueueUpdate;
  /** Every endpoint and every pending delivery: what a delivery worker's copy starts from. */
  snapshot(): QueueSnapshot;
  /** Loads a snapshot into an empty queue (the worker's copy). Leases are not carried: every delivery is claimable. */
  load(snapshot: QueueSnapshot): void;
}

/** QueueChange: one change the API made to its copy, replayed on the worker's in the same order. */
export type QueueChange =
  | { op: "enqueue"; delivery: NewDelivery }
  | { op: "putEndpoint"; endpoint: MemoryEndpoint }
  | { op: "setSecrets"; endpointId: string; secrets: SigningSecret[] }
  | { op: "retire"; endpointId: string; at: Date }
  | { op: "forget"; eventIds: string[] };

/** QueueUpdate: the worker's copy's changes the API shows (never a body, a lease or a secret). */
export interface QueueUpdate {
  deliveries: Pick<DeliveryRecord, "id" | "status" | "attempts" | "nextAttemptAt" | "updatedAt">[];
  endpoints: Pick<MemoryEndpoint, "id" | "status" | "disabledReason" | "failingSince">[];
}

/** QueueSnapshot: a queue's endpoints and pending deliveries. */
export interface QueueSnapshot {
  endpoints: MemoryEndpoint[];
  deliveries: DeliveryRecord[];
}

export interface MemoryDeliveryQueueOptions {
  /** Milliseconds on a clock that only moves forward; leases run on it (default performance.now). */
  leaseClock?: () => number;
  /** A new lease token (default a random UUID). */
  leaseToken?: () => string;
  /**
   * The delivery worker's copy: records what claims and completions change,
   * for takeUpdate(), which also drops the deliveries it reports ended.
   */
  trackChanges?: boolean;
}

/** IdleEntry: a delivery waiting for a claim, as of its due time when it was put in its endpoint's heap. */
interface IdleEntry {
  at: number;
  createdAt: number;
  id: string;
}

/** EndpointLine: one endpoint's idle deliveries, oldest due first, and the ones under a lease. */
interface EndpointLine {
  idle: OrderedHeap<IdleEntry>;
  leased: Set<string>;
}

const dueFirst = (a: IdleEntry, b: IdleEntry) => a.at < b.at || (a.at === b.at && (a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)));

/**
 * createMemoryDeliveryQueue keeps deliveries in the process, with the
 * semantics the DeliveryQueue port requires of every implementation: leased,
 * token-fenced claims, per-endpoint limits that count every lease, atomic
 * completion. Each method runs to completion without awaiting, which in one
 * JavaScript thread is what a transaction is elsewhere: two engines sharing
 * one queue never send the same delivery at once.
 *
 * A claim never walks the backlog (issue 21 §2: a claim that scanned every
 * pending delivery made draining n of them cost n²): each endpoint keeps its
 * idle deliveries in a heap by due time and its leased ones in a set, so a
 * claim costs the endpoints with something pending plus what it takes. An
 * entry whose delivery has since been leased, ended or moved to another time
 * is dropped when it comes out (every change of an idle delivery pushes a
 * fresh entry).
 */
export function createMemoryDeliveryQueue(options: MemoryDeliveryQueueOptions = {}): MemoryDeliveryQueue {
  const leaseClock = options.leaseClock ?? (() => performance.now());
  const leaseToken = options.leaseToken ?? randomUUID;
  const endpoints = new Map<string, MemoryEndpoint>();
  const deliveries = new Map<string, DeliveryRecord>();
  /** Ids of pending deliveries, so a claim never walks ended ones. */
  const pending = new Set<string>();
  /** Delivery ids by endpoint, in enqueue order, so an endpoint's deliveries are listed without a scan. */
  const byEndpoint = new Map<string, string[]>();
  /** Endpoints with deliveries idle or leased: what a claim looks at. */
  const lines = new Map<string, EndpointLine>();

  const lineOf = (endpointId: string) => {
    let line = lines.get(endpointId);
    if (!line) lines.set(endpointId, (line = { idle: createOrderedHeap(dueFirst), leased: new Set() }));
    return line;
  };
  /** Set while this queue is the API's copy of a worker's (follow()). */
  let follower: ((change: QueueChange) => void) | undefined;
  const touched = options.trackChanges ? { deliveries: new Set<string>(), endpoints: new Set<string>() } : undefined;

  /** The delivery waits for a claim again (enqueued, retried, released, its lease ran out, moved to a later time). */
  const markIdle = (d: DeliveryRecord) => {
    // The API's copy is never claimed from: it keeps no heaps to drain.
    if (follower) return;
    const line = lineOf(d.endpointId);
    line.leased.delete(d.id);
    line.idle.push({ at: d.nextAttemptAt!.getTime(), createdAt: d.createdAt.getTime(), id: d.id });
  };

  const leased = (d: DeliveryRecord, now: number) => d.lease !== null && d.lease.expiresAt > now;
  const copy = <T>(value: T): T => structuredClone(value);

  function end(delivery: DeliveryRecord, status: "succeeded" | "failed", at: Date) {
    delivery.status = status;
    delivery.nextAttemptAt = null;
    delivery.updatedAt = at;
    delivery.lease = null;
    pending.delete(delivery.id);
    touched?.deliveries.add(delivery.id);
    lines.get(delivery.endpointId)?.leased.delete(delivery.id);
  }

function claimNow(request: ClaimRequest): ClaimedDelivery[] {
    const leaseNow = leaseClock();
    const nowMs = request.now.getTime();
    const merchantOf = (endpointId: string) => endpoints.get(endpointId)!.merchantId ?? "";
    const oldestFirst = (a: DeliveryRecord, b: DeliveryRecord) =>
      a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime() || a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    // Leases: counted per endpoint (every owner's) and per merchant (this owner's); one that ran out makes its delivery idle again.
    const inFlight = new Map<string, number>();
    const owned = new Map<string, number>();
    for (const [endpointId, line] of lines) {
      for (const id of line.leased) {
        const d = deliveries.get(id);
        if (!d || d.status !== "pending" || d.lease === null) line.leased.delete(id);
        else if (d.lease.expiresAt > leaseNow) {
          inFlight.set(endpointId, (inFlight.get(endpointId) ?? 0) + 1);
          if (d.lease.owner === request.owner) owned.set(merchantOf(endpointId), (owned.get(merchantOf(endpointId)) ?? 0) + 1);
        } else markIdle(d);
      }
    }
    // Each endpoint's oldest due idle deliveries, as many as it has free slots, out of its heap.
    const taken = new Set<string>();
    const takeDue = (line: EndpointLine, max: number) => {
      const out: DeliveryRecord[] = [];
      while (out.length < max) {
        const top = line.idle.peek();
        if (!top || top.at > nowMs) break;
        line.idle.pop();
        const d = deliveries.get(top.id);
        if (!d || d.status !== "pending" || leased(d, leaseNow) || d.nextAttemptAt!.getTime() !== top.at || taken.has(d.id)) continue;
        taken.add(d.id);
        out.push(d);
      }
      return out;
    };
    const dueByMerchant = new Map<string, DeliveryRecord[]>();
    for (const [endpointId, line] of lines) {
      const endpoint = endpoints.get(endpointId)!;
      if (endpoint.status !== "enabled") {
        for (const d of takeDue(line, Infinity)) end(d, "failed", request.now);
      } else {
        const endpointLimit = endpoint.failingSince === null ? request.perEndpointLimit : 1;
        const free = Math.max(0, endpointLimit - (inFlight.get(endpointId) ?? 0));
        const due = free > 0 ? takeDue(line, free) : [];
        if (due.length > 0) {
          const merchant = merchantOf(endpointId);
          let list = dueByMerchant.get(merchant);
          if (!list) dueByMerchant.set(merchant, (list = []));
          list.push(...due);
        }
      }
      if (line.idle.size === 0 && line.leased.size === 0) lines.delete(endpointId);
    }
    // Each merchant's takeable deliveries, oldest due first, within its own share of this owner's slots.
    const turns: DeliveryRecord[][] = [];
    const perMerchantLimit = request.perMerchantLimit ?? request.limit;
    for (const [merchant, list] of dueByMerchant) {
      const share = Math.max(0, perMerchantLimit - (owned.get(merchant) ?? 0));
      list.sort(oldestFirst).slice(0, share).forEach((d, turn) => (turns[turn] ??= []).push(d));
    }
    // Round-robin over merchants: every merchant's first, then every merchant's second, …
    const order = turns.flatMap((round) => round.sort(oldestFirst)).slice(0, request.limit);
    const claimed: ClaimedDelivery[] = [];
    for (const d of order) {
      d.lease = { owner: request.owner, token: leaseToken(), expiresAt: leaseNow + request.leaseMs };
      lineOf(d.endpointId).leased.add(d.id);
      const endpoint = endpoints.get(d.endpointId)!;
      claimed.push({
        deliveryId: d.id,
        eventId: d.eventId,
        eventType: d.eventType,
        body: d.body,
        attemptsMade: d.attempts.length,
        createdAt: new Date(d.createdAt),
        endpoint: { id: endpoint.id, url: endpoint.url, secrets: copy(endpoint.secrets) },
        lease: { deliveryId: d.id, token: d.lease.token },
      });
    }
    // Taken out of their heaps but not chosen (the merchant's share or the limit): back in.
    for (const d of taken) {
      const delivery = deliveries.get(d)!;
      if (delivery.status === "pending" && delivery.lease === null) markIdle(delivery);
    }
    return claimed;
  }

function completeNow({ lease, attempt, next, endpoint: effect }: DeliveryCompletion): CompletionResult {
    const pauseOthers = (endpointId: string, until: Date) => {
      const leaseNow = leaseClock();
      for (const id of byEndpoint.get(endpointId) ?? []) {
        const other = deliveries.get(id)!;
        if (other.id === lease.deliveryId || other.status !== "pending" || leased(other, leaseNow)) continue;
        if (other.nextAttemptAt!.getTime() < until.getTime()) {
          other.nextAttemptAt = new Date(until);
          touched?.deliveries.add(other.id);
          markIdle(other);
        }
      }
    };
    const delivery = deliveries.get(lease.deliveryId);
    if (!delivery || delivery.status !== "pending" || delivery.lease?.token !== lease.token) return { recorded: false };
    const endpoint = endpoints.get(delivery.endpointId)!;
    delivery.attempts.push(copy(attempt));
    touched?.deliveries.add(delivery.id);
    touched?.endpoints.add(endpoint.id);

    let disabled: DisabledReason | null = null;
    if (effect.kind === "succeeded") endpoint.failingSince = null;
    else if (effect.kind === "gone") disabled = "gone";
    else {
      endpoint.failingSince ??= new Date(effect.at);
      if (endpoint.failingSince.getTime() <= effect.disableIfFailingSince.getTime()) disabled = "failing";
    }
    if (disabled !== null && endpoint.status === "enabled") {
      endpoint.status = "disabled";
      endpoint.disabledReason = disabled;
    } else disabled = null;

    if (next.status === "pending" && endpoint.status === "enabled") {
      delivery.nextAttemptAt = new Date(next.nextAttemptAt);
      delivery.updatedAt = attempt.at;
      delivery.lease = null;
      markIdle(delivery);
    } else end(delivery, next.status === "succeeded" ? "succeeded" : "failed", attempt.at);

    if (effect.kind === "failed" && effect.pauseUntil && endpoint.status === "enabled") pauseOthers(endpoint.id, effect.pauseUntil);
    let otherDeliveriesFailed = 0;
    if (disabled !== null) {
      const leaseNow = leaseClock();
      for (const id of byEndpoint.get(endpoint.id) ?? []) {
        const other = deliveries.get(id)!;
        if (other.status !== "pending" || leased(other, leaseNow)) continue;
        end(other, "failed", attempt.at);
        otherDeliveriesFailed += 1;
      }
    }
    return { recorded: true, status: delivery.status, endpointDisabled: disabled, otherDeliveriesFailed };
  }

  const queue: MemoryDeliveryQueue = {
    putEndpoint(endpoint) {
      endpoints.set(endpoint.id, {
        status: "enabled",
        disabledReason: null,
        failingSince: null,
        ...copy(endpoint),
      });
      follower?.({ op: "putEndpoint", endpoint: endpoints.get(endpoint.id)! });
    },
    endpoint: (id) => copy(endpoints.get(id)),
    enqueue(delivery) {
      if (!endpoints.has(delivery.endpointId)) throw new Error(`unknown webhook endpoint ${delivery.endpointId}`);
      if (deliveries.has(delivery.id)) throw new Error(`delivery ${delivery.id} already exists`);
      deliveries.set(delivery.id, {
        id: delivery.id,
        eventId: delivery.eventId,
        eventType: delivery.eventType,
        endpointId: delivery.endpointId,
        body: delivery.body,
        status: "pending",
        attempts: [],
        nextAttemptAt: new Date(delivery.nextAttemptAt ?? delivery.createdAt),
        createdAt: new Date(delivery.createdAt),
        updatedAt: new Date(delivery.createdAt),
        lease: null,
      });
      pending.add(delivery.id);
      follower?.({ op: "enqueue", delivery });
      markIdle(deliveries.get(delivery.id)!);
      let ofEndpoint = byEndpoint.get(delivery.endpointId);
      if (!ofEndpoint) byEndpoint.set(delivery.endpointId, (ofEndpoint = []));
      ofEndpoint.push(delivery.id);
    },
    delivery: (id) => copy(deliveries.get(id)),
    deliveries: () => [...deliveries.values()].map(copy),
    deliveriesOf: (endpointId) => (byEndpoint.get(endpointId) ?? []).map((id) => copy(deliveries.get(id)!)),
    setSecrets(endpointId, secrets) {
      const endpoint = endpoints.get(endpointId);
      if (!endpoint) return false;
      endpoint.secrets = copy(secrets);
      follower?.({ op: "setSecrets", endpointId, secrets: endpoint.secrets });
      return true;
    },
    forgetEnded(eventIds) {
      const held = new Set<string>();
      const doomed: DeliveryRecord[] = [];
      for (const delivery of deliveries.values()) {
        if (!eventIds.has(delivery.eventId)) continue;
        if (delivery.status === "pending") held.add(delivery.eventId);
        else doomed.push(delivery);
      }
      const forgotten = new Set([...eventIds].filter((id) => !held.has(id)));
      const emptied = new Set<string>();
      for (const delivery of doomed) {
        if (!forgotten.has(delivery.eventId)) continue;
        deliveries.delete(delivery.id);
        emptied.add(delivery.endpointId);
      }
      if (follower && forgotten.size > 0) follower({ op: "forget", eventIds: [...forgotten] });
      for (const endpointId of emptied) byEndpoint.set(endpointId, byEndpoint.get(endpointId)!.filter((id) => deliveries.has(id)));
      return forgotten;
    },
    retireEndpoint(endpointId, at) {
      const endpoint = endpoints.get(endpointId);
      if (!endpoint) return 0;
      endpoint.status = "disabled";
      follower?.({ op: "retire", endpointId, at });
      const leaseNow = leaseClock();
      let ended = 0;
      for (const id of byEndpoint.get(endpointId) ?? []) {
        const delivery = deliveries.get(id)!;
        if (delivery.status !== "pending" || leased(delivery, leaseNow)) continue;
        end(delivery, "failed", at);
        ended += 1;
      }
      return ended;
    },

    follow(listener) {
      follower = listener;
      lines.clear();
      return () => {
        if (follower !== listener) return;
        follower = undefined;
        // Scheduling here again (the engine back on this thread): every pending delivery is idle.
        for (const id of pending) markIdle(deliveries.get(id)!);
      };
    },
    applyUpdate(update) {
      for (const u of update.deliveries) {
        const d = deliveries.get(u.id);
        if (!d) continue;
        d.status = u.status;
        d.attempts = u.attempts;
        d.nextAttemptAt = u.nextAttemptAt;
        d.updatedAt = u.updatedAt;
        if (u.status === "pending") pending.add(u.id);
        else pending.delete(u.id);
      }
      for (const u of update.endpoints) {
        const endpoint = endpoints.get(u.id);
        if (!endpoint) continue;
        endpoint.status = u.status;
        endpoint.disabledReason = u.disabledReason;
        endpoint.failingSince = u.failingSince;
      }
    },
    takeUpdate() {
      const update: QueueUpdate = { deliveries: [], endpoints: [] };
      if (!touched) return update;
      // An ended delivery, once reported, is the API copy's alone: the worker's copy keeps only what it may still send.
      const emptied = new Set<string>();
      for (const id of touched.deliveries) {
        const d = deliveries.get(id);
        if (!d) continue;
        update.deliveries.push(copy({ id, status: d.status, attempts: d.attempts, nextAttemptAt: d.nextAttemptAt, updatedAt: d.updatedAt }));
        if (d.status !== "pending") {
          deliveries.delete(id);
          emptied.add(d.endpointId);
        }
      }
      for (const endpointId of emptied) byEndpoint.set(endpointId, byEndpoint.get(endpointId)!.filter((id) => deliveries.has(id)));
      for (const id of touched.endpoints) {
        const e = endpoints.get(id);
        if (e) update.endpoints.push(copy({ id, status: e.status, disabledReason: e.disabledReason, failingSince: e.failingSince }));
      }
      touched.deliveries.clear();
      touched.endpoints.clear();
      return update;
    },
    snapshot: () => ({ endpoints: [...endpoints.values()].map(copy), deliveries: [...pending].map((id) => copy({ ...deliveries.get(id)!, lease: null })) }),
    load(snapshot) {
      for (const endpoint of snapshot.endpoints) endpoints.set(endpoint.id, copy(endpoint));
      for (const record of snapshot.deliveries) {
        const d = { ...copy(record), lease: null };
        deliveries.set(d.id, d);
        if (d.status !== "pending") continue;
        pending.add(d.id);
        markIdle(d);
        let ofEndpoint = byEndpoint.get(d.endpointId);
        if (!ofEndpoint) byEndpoint.set(d.endpointId, (ofEndpoint = []));
        ofEndpoint.push(d.id);
      }
    },

    claim: async (request) => claimNow(request),
    complete: async (completion) => completeNow(completion),

    // One turn of this thread, the whole batch: nothing else runs between its steps.
    async settle({ completions, claim }) {
      return { results: completions.map(completeNow), claimed: claim ? claimNow(claim) : [] };
    },
    async release(leases) {
      for (const { deliveryId, token } of leases) {
        const delivery = deliveries.get(deliveryId);
        if (delivery?.status === "pending" && delivery.lease?.token === token) {
          delivery.lease = null;
          markIdle(delivery);
        }
      }
    },

    async stats(now) {
      let due = 0;
      let oldest: Date | null = null;
      for (const id of pending) {
        const d = deliveries.get(id)!;
        if (d.nextAttemptAt!.getTime() <= now.getTime()) due += 1;
        if (oldest === null || d.createdAt < oldest) oldest = d.createdAt;
      }
      return { pending: pending.size, due, oldestPendingCreatedAt: oldest === null ? null : new Date(oldest) };
    },
  };
  return queue;
}
