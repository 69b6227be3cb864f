import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { createManualClock } from "../support/manual-clock.js";
import { silentLogger } from "../../src/lib/logger.js";
import type { DeliveryQueue, SettleRequest } from "../../src/store/delivery-queue.js";
import { createMemoryDeliveryQueue } from "../../src/store/memory/memory-delivery-queue.js";
import { createDeliveryEngine, type DeliveryEngine } from "../../src/webhooks/delivery-engine.js";
import { createRetryPolicy, defaultRetrySchedule, parseRetrySchedule } from "../../src/webhooks/retry-policy.js";
import type { SendResult, WebhookSender } from "../../src/webhooks/webhook-sender.js";

const secrets = [{ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", expiresAt: null }];
const ok: SendResult = { outcome: "success", statusCode: 204, retryAfterMs: null, durationMs: 2, error: null };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How the engine talks to its queue (issue 21 §2): the answers of one turn
 * are recorded together with the next claim in one settle(), and a wake-up
 * while attempts are in flight waits a little for their answers' claim
 * instead of claiming at every commit.
 */
describe("createDeliveryEngine: one settle() per turn", () => {
  let engine: DeliveryEngine | undefined;
  afterEach(() => engine?.stop());

  function start(wakeDeferMs: number) {
    const clock = createManualClock("2026-06-01T00:00:00.000Z");
    const memory = createMemoryDeliveryQueue();
    memory.putEndpoint({ id: "we_1", url: "https://a.example.com/hook", secrets });
    const settles: SettleRequest[] = [];
    const queue: DeliveryQueue = {
      ...memory,
      settle: (request) => {
        settles.push(request);
        return memory.settle(request);
      },
    };
    const waiting: ((result: SendResult) => void)[] = [];
    const sender: WebhookSender = {
      timeoutMs: 2000,
      send: (request) =>
        new Promise((resolve) => {
          waiting.push(resolve);
          // stop() cuts what is still out after its grace.
          request.signal?.addEventListener("abort", () => resolve({ ...ok, outcome: "aborted", statusCode: null }));
        }),
      close: async () => {},
    };
    let n = 0;
    const enqueue = () => {
      n += 1;
      memory.enqueue({ id: `whd_${n}`, eventId: `evt_${n}`, eventType: "payment_intent.created", endpointId: "we_1", body: "{}", createdAt: clock.now() });
    };
    engine = createDeliveryEngine({
      queue,
      sender,
      policy: createRetryPolicy({ schedule: parseRetrySchedule(defaultRetrySchedule) }),
      clock,
      logger: silentLogger,
      pollIntervalMs: 60_000,
      perEndpointConcurrency: 3,
      wakeDeferMs,
      graceMs: 10,
    });
    return { memory, settles, waiting, enqueue, engine };
  }

  it("records the answers that came in one turn in one settle(), which claims the slots they freed", async () => {
    const { memory, settles, waiting, enqueue, engine } = start(50);
    for (let i = 0; i < 5; i++) enqueue();
    engine.start();
    await sleep(20);
    assert.equal(waiting.length, 3, "the endpoint's three slots");
    const before = settles.length;
    for (const answer of waiting.splice(0)) answer(ok);
    await sleep(20);
    assert.deepEqual(
      settles.slice(before).map((s) => [s.completions.length, s.claim !== undefined]),
      [[3, true]],
      "one settle for the three answers, with the claim",
    );
    assert.equal(waiting.length, 2, "the other two went out at once");
    assert.deepEqual(
      ["whd_1", "whd_2", "whd_3", "whd_4"].map((id) => memory.delivery(id)!.status),
      ["succeeded", "succeeded", "succeeded", "pending"],
    );
  });

  it("defers a wake-up while attempts are in flight, by wakeDeferMs at most", async () => {
    const { settles, waiting, enqueue, engine } = start(150);
    enqueue();
    engine.start();
    await sleep(20);
    assert.equal(waiting.length, 1);
    const before = settles.length;
    enqueue();
    engine.wake();
    await sleep(60);
    assert.equal(settles.length, before, "no claim yet: an attempt is in flight");
    await sleep(200);
    assert.equal(settles.length, before + 1, "claimed within the deferral");
    assert.equal(waiting.length, 2);
    for (const answer of waiting.splice(0)) answer(ok);
    await sleep(20);
  });
});
