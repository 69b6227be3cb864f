import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { ClaimedDelivery, DeliveryAttempt, DeliveryQueue, DisabledReason } from "../../../src/store/delivery-queue.js";
import type { DeliveryRecord, NewDelivery } from "../../../src/store/memory/memory-delivery-queue.js";
import type { SigningSecret } from "../../../src/domain/signing-secrets.js";

/**
 * DeliveryQueueHarness is a DeliveryQueue with what the contract needs to set
 * up and inspect it. The memory queue provides it directly; the PostgreSQL
 * implementation provides it over a fresh database (endpoints under some
 * merchant, deliveries under some event), and runs this same suite.
 */
export interface DeliveryQueueHarness {
  queue: DeliveryQueue;
  /** Adds an endpoint, of merchantId when given (else of the harness's one merchant). */
  addEndpoint(endpoint: { id: string; url: string; secrets: SigningSecret[]; status?: "enabled" | "disabled"; merchantId?: string }): Promise<void>;
  enqueue(delivery: NewDelivery): Promise<void>;
  delivery(id: string): Promise<Pick<DeliveryRecord, "status" | "attempts" | "nextAttemptAt"> | undefined>;
  endpoint(id: string): Promise<{ status: "enabled" | "disabled"; disabledReason: DisabledReason | null; failingSince: Date | null } | undefined>;
  close(): Promise<void>;
}

const t0 = new Date("2026-05-01T10:00:00.000Z");
const at = (ms: number) => new Date(t0.getTime() + ms);
const secrets: SigningSecret[] = [{ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", expiresAt: null }];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fiveDays = 5 * 86_400_000;

/**
 * describeDeliveryQueueContract is the behaviour every DeliveryQueue must
 * have (the JSDoc of delivery-queue.ts), as one suite run against each
 * implementation. Leases are real time, so lease expiry is tested with short
 * leases and a real wait.
 */
export function describeDeliveryQueueContract(name: string, makeHarness: () => Promise<DeliveryQueueHarness>): void {
  describe(`DeliveryQueue contract: ${name}`, () => {
    let h: DeliveryQueueHarness;
    let endpointA: string;
    let endpointB: string;
    beforeEach(async () => {
      h = await makeHarness();
      endpointA = `we_${randomUUID()}`;
      endpointB = `we_${randomUUID()}`;
      await h.addEndpoint({ id: endpointA, url: "https://a.example.com/hook", secrets });
      await h.addEndpoint({ id: endpointB, url: "https://b.example.com/hook", secrets });
    });
    afterEach(() => h.close());

    async function enqueue(endpointId: string, createdAt: Date, nextAttemptAt?: Date): Promise<string> {
      const id = `whd_${randomUUID()}`;
      const eventId = `evt_${randomUUID()}`;
      await h.enqueue({ id, eventId, eventType: "payment_intent.created", endpointId, body: `{"id":"${eventId}"}`, createdAt, nextAttemptAt });
      return id;
    }
    const claim = (owner: string, now: Date, limit = 10, perEndpointLimit = 10, leaseMs = 60_000, perMerchantLimit?: number) =>
      h.queue.claim({ now, owner, leaseMs, limit, perEndpointLimit, perMerchantLimit });
    const attempt = (ms: number, statusCode: number | null = 500): DeliveryAttempt => ({ at: at(ms), statusCode, durationMs: 15, error: null });
    const failed = (ms: number) => ({ kind: "failed" as const, at: at(ms), disableIfFailingSince: at(ms - fiveDays) });

    it("claims due deliveries, oldest due first, with the event body and the endpoint's URL and secrets", async () => {
      const second = await enqueue(endpointA, at(0), at(20));
      const first = await enqueue(endpointA, at(10), at(10));
      await enqueue(endpointA, at(0), at(5000));
      const claimed = await claim("i1", at(100));
      assert.deepEqual(claimed.map((c) => c.deliveryId), [first, second]);
      const c = claimed[0]!;
      assert.equal(c.body, `{"id":"${c.eventId}"}`);
      assert.equal(c.eventType, "payment_intent.created");
      assert.equal(c.attemptsMade, 0);
      assert.deepEqual(c.createdAt, at(10));
      assert.deepEqual(c.endpoint, { id: endpointA, url: "https://a.example.com/hook", secrets });
      assert.equal(c.lease.deliveryId, first);
      assert.equal(typeof c.lease.token, "string");
    });

    it("never hands out a delivery again while its lease runs, and honours the limit", async () => {
      for (let i = 0; i < 5; i++) await enqueue(endpointA, at(i));
      const one = await claim("i1", at(100), 3);
      const two = await claim("i2", at(100), 3);
      const three = await claim("i3", at(100), 3);
      assert.equal(one.length, 3);
      assert.equal(two.length, 2);
      assert.equal(three.length, 0);
      assert.equal(new Set([...one, ...two].map((c) => c.deliveryId)).size, 5);
    });

    it("never returns one delivery to two concurrent claims", async () => {
      for (let i = 0; i < 30; i++) await enqueue(i % 2 ? endpointA : endpointB, at(i));
      const rounds = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(`i${i}`, at(100), 5, 100)));
      const ids = rounds.flat().map((c) => c.deliveryId);
      assert.equal(ids.length, 30);
      assert.equal(new Set(ids).size, 30);
    });

    it("counts every owner's unexpired leases against the per-endpoint limit, and skips a full endpoint's backlog", async () => {
      for (let i = 0; i < 10; i++) await enqueue(endpointA, at(i));
      const late = await enqueue(endpointB, at(50));
      const first = await claim("i1", at(100), 3, 2);
      assert.deepEqual(
        first.map((c) => c.endpoint.id),
        [endpointA, endpointA, endpointB],
        "two of A's backlog, then B's delivery although it is younger",
      );
      assert.equal(first[2]!.deliveryId, late);
      assert.deepEqual(await claim("i2", at(100), 10, 2), [], "A already has 2 in flight, on another owner");
      await h.queue.complete({ lease: first[0]!.lease, attempt: attempt(150, 200), next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });
      assert.equal((await claim("i2", at(200), 10, 2)).length, 1, "a slot of A freed");
    });

    it("takes merchants round-robin: each one's oldest due, then each one's second, so a big backlog never hides another merchant's delivery", async () => {
      const [a1, a2, b1] = [`we_${randomUUID()}`, `we_${randomUUID()}`, `we_${randomUUID()}`];
      await h.addEndpoint({ id: a1, url: "https://a1.example.com/", secrets, merchantId: "mer_rr_a" });
      await h.addEndpoint({ id: a2, url: "https://a2.example.com/", secrets, merchantId: "mer_rr_a" });
      await h.addEndpoint({ id: b1, url: "https://b1.example.com/", secrets, merchantId: "mer_rr_b" });
      const ofA: string[] = [];
      for (let i = 0; i < 6; i++) ofA.push(await enqueue(i % 2 === 0 ? a1 : a2, at(i)));
      const ofB = [await enqueue(b1, at(50)), await enqueue(b1, at(60))];
      const claimed = await claim("i1", at(100), 5);
      assert.deepEqual(
        claimed.map((c) => c.deliveryId),
        [ofA[0], ofB[0], ofA[1], ofB[1], ofA[2]],
        "A's first, B's first, A's second, B's second, A's third",
      );
    });

    it("gives one merchant at most perMerchantLimit of an owner's leases; another owner has its own share", async () => {
      const [a1, b1] = [`we_${randomUUID()}`, `we_${randomUUID()}`];
      await h.addEndpoint({ id: a1, url: "https://a1.example.com/", secrets, merchantId: "mer_share_a" });
      await h.addEndpoint({ id: b1, url: "https://b1.example.com/", secrets, merchantId: "mer_share_b" });
      for (let i = 0; i < 10; i++) await enqueue(a1, at(i));
      const ofB = await enqueue(b1, at(50));
      const first = await claim("i1", at(100), 10, 10, 60_000, 3);
      assert.equal(first.filter((c) => c.endpoint.id === a1).length, 3);
      assert.deepEqual(first.filter((c) => c.endpoint.id === b1).map((c) => c.deliveryId), [ofB]);
      assert.deepEqual(await claim("i1", at(100), 10, 10, 60_000, 3), [], "i1's share of merchant A is used up");
      assert.equal((await claim("i2", at(100), 10, 10, 60_000, 3)).length, 3, "i2 has a share of its own");
    });

    it("lets a failing endpoint have one delivery in flight, and pauses a timed-out endpoint's other deliveries until its retry", async () => {
      const ids = [await enqueue(endpointA, at(0)), await enqueue(endpointA, at(1)), await enqueue(endpointA, at(2))];
      const [probe] = await claim("i1", at(100), 1);
      assert.equal(probe!.deliveryId, ids[0]);
      await h.queue.complete({
        lease: probe!.lease,
        attempt: { at: at(100), statusCode: null, durationMs: 10_000, error: "no answer within 10000 ms" },
        next: { status: "pending", nextAttemptAt: at(5100) },
        endpoint: { ...failed(100), pauseUntil: at(5100) },
      });
      for (const id of ids) assert.deepEqual((await h.delivery(id))!.nextAttemptAt, at(5100), id);
      assert.deepEqual((await h.delivery(ids[1]!))!.attempts, [], "a pause is not an attempt");
      assert.deepEqual(await claim("i1", at(5099)), [], "nothing of the endpoint before its retry");
      const retried = await claim("i1", at(5100));
      assert.deepEqual(retried.map((c) => c.deliveryId), [ids[0]], "one at a time while it is failing");
      assert.deepEqual(await claim("i2", at(5100)), [], "whoever claims");
    });

    it("makes a delivery claimable again when its lease runs out, and fences the old claim out", async () => {
      const id = await enqueue(endpointA, at(0));
      const [stale] = await claim("crashed", at(100), 10, 10, 150);
      assert.deepEqual(await claim("i2", at(100)), []);
      await sleep(300);
      const [fresh] = await claim("i2", at(100));
      assert.equal(fresh!.deliveryId, id);
      assert.notEqual(fresh!.lease.token, stale!.lease.token);
      assert.equal(fresh!.attemptsMade, 0, "an expired lease is not an attempt");
      const late = await h.queue.complete({ lease: stale!.lease, attempt: attempt(200, 200), next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });
      assert.deepEqual(late, { recorded: false });
      assert.equal((await h.delivery(id))!.attempts.length, 0);
      const done = await h.queue.complete({ lease: fresh!.lease, attempt: attempt(200, 200), next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });
      assert.deepEqual(done, { recorded: true, status: "succeeded", endpointDisabled: null, otherDeliveriesFailed: 0 });
    });

    it("still completes with a lease that ran out but was not claimed again", async () => {
      const id = await enqueue(endpointA, at(0));
      const [c] = await claim("slow", at(100), 10, 10, 100);
      await sleep(200);
      const done = await h.queue.complete({ lease: c!.lease, attempt: attempt(200, 200), next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });
      assert.equal(done.recorded, true);
      assert.equal((await h.delivery(id))!.status, "succeeded");
    });

    it("records an attempt and the next state atomically, once per claim", async () => {
      const id = await enqueue(endpointA, at(0));
      const [c] = await claim("i1", at(100));
      const a1: DeliveryAttempt = { at: at(100), statusCode: 500, durationMs: 42, error: null };
      const result = await h.queue.complete({ lease: c!.lease, attempt: a1, next: { status: "pending", nextAttemptAt: at(5100) }, endpoint: failed(120) });
      assert.deepEqual(result, { recorded: true, status: "pending", endpointDisabled: null, otherDeliveriesFailed: 0 });
      assert.deepEqual(await h.queue.complete({ lease: c!.lease, attempt: a1, next: { status: "succeeded" }, endpoint: { kind: "succeeded" } }), { recorded: false });
      let stored = (await h.delivery(id))!;
      assert.deepEqual({ status: stored.status, attempts: stored.attempts, nextAttemptAt: stored.nextAttemptAt }, { status: "pending", attempts: [a1], nextAttemptAt: at(5100) });

      assert.deepEqual(await claim("i1", at(5099)), [], "not due before its next attempt");
      const [again] = await claim("i1", at(5100));
      assert.equal(again!.attemptsMade, 1);
      const a2: DeliveryAttempt = { at: at(5100), statusCode: null, durationMs: 10_000, error: "no answer within 10000 ms" };
      await h.queue.complete({ lease: again!.lease, attempt: a2, next: { status: "failed" }, endpoint: failed(5200) });
      stored = (await h.delivery(id))!;
      assert.deepEqual({ status: stored.status, attempts: stored.attempts, nextAttemptAt: stored.nextAttemptAt }, { status: "failed", attempts: [a1, a2], nextAttemptAt: null });
      assert.deepEqual(await claim("i1", at(999_999)), []);
    });

    it("tracks when an endpoint started failing: set by the first failure, kept by the next, cleared by a success", async () => {
      for (let i = 0; i < 3; i++) await enqueue(endpointA, at(i));
      const [c1, c2, c3] = await claim("i1", at(100));
      await h.queue.complete({ lease: c1!.lease, attempt: attempt(1000), next: { status: "pending", nextAttemptAt: at(9000) }, endpoint: failed(1000) });
      assert.deepEqual((await h.endpoint(endpointA))!.failingSince, at(1000));
      await h.queue.complete({ lease: c2!.lease, attempt: attempt(2000), next: { status: "pending", nextAttemptAt: at(9000) }, endpoint: failed(2000) });
      assert.deepEqual((await h.endpoint(endpointA))!.failingSince, at(1000));
      await h.queue.complete({ lease: c3!.lease, attempt: attempt(3000, 200), next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });
      assert.deepEqual(await h.endpoint(endpointA), { status: "enabled", disabledReason: null, failingSince: null });
    });

    it("disables an endpoint failing since the threshold, failing its idle pending deliveries but not those in flight", async () => {
      // Claimed together while the endpoint is healthy (a failing one has one in flight at a time).
      const [first, deciding, inFlight] = [await enqueue(endpointA, at(0)), await enqueue(endpointA, at(1)), await enqueue(endpointA, at(2))];
      const claimed = await claim("i1", at(10), 3);
      assert.deepEqual(claimed.map((x) => x.deliveryId), [first, deciding, inFlight]);
      const [c, decidingClaim, rest] = claimed as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery];
      await h.queue.complete({ lease: c.lease, attempt: attempt(10), next: { status: "pending", nextAttemptAt: at(fiveDays + 10) }, endpoint: failed(10) });
      const idle = await enqueue(endpointA, at(fiveDays), at(fiveDays + 60_000));
      const other = await enqueue(endpointB, at(fiveDays));
      const result = await h.queue.complete({
        lease: decidingClaim.lease,
        attempt: attempt(fiveDays + 20),
        next: { status: "pending", nextAttemptAt: at(fiveDays + 99_000) },
        endpoint: failed(fiveDays + 20),
      });
      assert.deepEqual(result, { recorded: true, status: "failed", endpointDisabled: "failing", otherDeliveriesFailed: 2 });
      assert.deepEqual(await h.endpoint(endpointA), { status: "disabled", disabledReason: "failing", failingSince: at(10) });
      assert.equal((await h.delivery(first))!.status, "failed", "idle, waiting for its retry");
      assert.equal((await h.delivery(idle))!.status, "failed");
      assert.equal((await h.delivery(idle))!.attempts.length, 0);
      assert.equal((await h.delivery(inFlight))!.status, "pending", "in flight: ends when it completes");
      const late = await h.queue.complete({ lease: rest.lease, attempt: attempt(fiveDays + 30), next: { status: "pending", nextAttemptAt: at(fiveDays + 99_000) }, endpoint: failed(fiveDays + 30) });
      assert.deepEqual(late, { recorded: true, status: "failed", endpointDisabled: null, otherDeliveriesFailed: 0 });
      assert.equal((await h.delivery(other))!.status, "pending", "another endpoint is untouched");
      assert.equal((await h.endpoint(endpointB))!.status, "enabled");
    });

    it("disables an endpoint that answered 410, and never claims a disabled endpoint's deliveries: it ends them", async () => {
      const id = await enqueue(endpointA, at(0));
      const idle = await enqueue(endpointA, at(0), at(60_000));
      const [c] = await claim("i1", at(0));
      const result = await h.queue.complete({ lease: c!.lease, attempt: attempt(10, 410), next: { status: "failed" }, endpoint: { kind: "gone" } });
      assert.deepEqual(result, { recorded: true, status: "failed", endpointDisabled: "gone", otherDeliveriesFailed: 1 });
      assert.equal((await h.delivery(id))!.status, "failed");
      assert.deepEqual((await h.endpoint(endpointA))!.status, "disabled");
      assert.equal((await h.endpoint(endpointA))!.disabledReason, "gone");

      const disabled = `we_${randomUUID()}`;
      await h.addEndpoint({ id: disabled, url: "https://c.example.com/hook", secrets, status: "disabled" });
      const stray = await enqueue(disabled, at(0));
      const notDue = await enqueue(disabled, at(0), at(2_000_000));
      assert.deepEqual(await claim("i1", at(999_999)), []);
      assert.equal((await h.delivery(stray))!.status, "failed", "a due delivery of a disabled endpoint is ended by the claim");
      assert.equal((await h.delivery(stray))!.attempts.length, 0);
      assert.equal((await h.delivery(notDue))!.status, "pending", "until it is due");
    });

    it("settles a batch: each completion as complete() would, in order and fenced by its own lease, then a claim that takes the slots they freed", async () => {
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push(await enqueue(endpointA, at(i)));
      const first = await claim("i1", at(100), 10, 4);
      assert.deepEqual(first.map((c) => c.deliveryId), ids.slice(0, 4));
      assert.deepEqual(await claim("other", at(100), 10, 4), [], "the endpoint is full, whoever claims");
      const ok = (ms: number) => ({ attempt: attempt(ms, 200), next: { status: "succeeded" as const }, endpoint: { kind: "succeeded" as const } });
      const settled = await h.queue.settle({
        completions: [
          { lease: first[0]!.lease, ...ok(150) },
          { lease: first[1]!.lease, ...ok(151) },
          { lease: first[0]!.lease, ...ok(152) },
          { lease: { deliveryId: first[2]!.deliveryId, token: "not-the-token" }, ...ok(153) },
        ],
        claim: { now: at(200), owner: "i1", leaseMs: 60_000, limit: 10, perEndpointLimit: 4 },
      });
      const recorded = { recorded: true, status: "succeeded", endpointDisabled: null, otherDeliveriesFailed: 0 };
      assert.deepEqual(settled.results, [recorded, recorded, { recorded: false }, { recorded: false }]);
      assert.deepEqual(settled.claimed.map((c) => c.deliveryId), ids.slice(4, 6), "the two slots the successes freed, in the same call");
      assert.deepEqual((await h.delivery(ids[0]!))!.attempts, [attempt(150, 200)], "once, though completed twice");
      assert.deepEqual((await h.delivery(ids[2]!))!.attempts, [], "a wrong token writes nothing");
      assert.equal((await h.delivery(ids[2]!))!.status, "pending");
    });

    it("settles failures and successes of a failing endpoint as complete() does, and claims nothing without a claim", async () => {
      const ids = [await enqueue(endpointA, at(0)), await enqueue(endpointA, at(1)), await enqueue(endpointB, at(2))];
      const claimed = await claim("i1", at(100), 10, 4);
      assert.equal(claimed.length, 3);
      const [a0, a1, b0] = ids.map((id) => claimed.find((c) => c.deliveryId === id)!);
      // A starts failing, and its success after the failure, in the same batch, clears that again; B answers 410.
      const settled = await h.queue.settle({
        completions: [
          { lease: a0!.lease, attempt: attempt(110), next: { status: "pending", nextAttemptAt: at(5000) }, endpoint: failed(110) },
          { lease: a1!.lease, attempt: attempt(111, 200), next: { status: "succeeded" }, endpoint: { kind: "succeeded" } },
          { lease: b0!.lease, attempt: attempt(112, 410), next: { status: "failed" }, endpoint: { kind: "gone" } },
        ],
      });
      assert.deepEqual(settled, {
        results: [
          { recorded: true, status: "pending", endpointDisabled: null, otherDeliveriesFailed: 0 },
          { recorded: true, status: "succeeded", endpointDisabled: null, otherDeliveriesFailed: 0 },
          { recorded: true, status: "failed", endpointDisabled: "gone", otherDeliveriesFailed: 0 },
        ],
        claimed: [],
      });
      assert.equal((await h.endpoint(endpointA))!.failingSince, null, "the success after the failure cleared it");
      assert.equal((await h.endpoint(endpointB))!.status, "disabled");
      assert.deepEqual((await h.delivery(ids[0]!))!.nextAttemptAt, at(5000));
      assert.deepEqual(await h.queue.settle({ completions: [] }), { results: [], claimed: [] });
    });

    it("gives leases back on release, without an attempt; a stale lease is ignored", async () => {
      const id = await enqueue(endpointA, at(0));
      const [c] = await claim("i1", at(0));
      await h.queue.release([{ deliveryId: id, token: "not-the-token" }]);
      assert.deepEqual(await claim("i2", at(0)), []);
      await h.queue.release([c!.lease]);
      const [again] = await claim("i2", at(0));
      assert.equal(again!.deliveryId, id);
      assert.equal(again!.attemptsMade, 0);
      assert.equal((await h.delivery(id))!.status, "pending");
    });

    it("reports queue depth, due deliveries and the oldest pending delivery's creation", async () => {
      assert.deepEqual(await h.queue.stats(at(0)), { pending: 0, due: 0, oldestPendingCreatedAt: null });
      await enqueue(endpointA, at(100));
      await enqueue(endpointA, at(50), at(10_000));
      const done = await enqueue(endpointB, at(10));
      const [c] = (await claim("i1", at(200))).filter((x) => x.deliveryId === done);
      await h.queue.complete({ lease: c!.lease, attempt: attempt(200, 200), next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });
      assert.deepEqual(await h.queue.stats(at(200)), { pending: 2, due: 1, oldestPendingCreatedAt: at(50) });
      assert.deepEqual(await h.queue.stats(at(10_000)), { pending: 2, due: 2, oldestPendingCreatedAt: at(50) });
    });
  });
}
