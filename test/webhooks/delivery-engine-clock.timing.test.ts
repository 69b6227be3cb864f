import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { startEngineHarness, type EngineHarness } from "./support/engine-harness.js";
import { createReceivers, waitUntil, type Receiver } from "./support/receiver.js";

// Timing tier (test:all): a retry made due by a clock jump goes out within a
// poll interval of the jump, which only a stopwatch can tell.

const minute = 60_000;

describe("createDeliveryEngine, timed", () => {
  let h: EngineHarness;
  const receivers = createReceivers();
  const receiver = receivers.start;
  afterEach(async () => {
    await h?.engine.stop();
    await receivers.closeAll();
  });

  /** Moves the manual clock and measures how long (real time) the receiver takes to get request number count. */
  async function advanceAndTime(r: Receiver, ms: number, count: number): Promise<number> {
    const started = performance.now();
    h.clock.advance(ms);
    const got = await r.nth(count, 3000);
    return got.at - started;
  }

  it("follows a clock moved through the default schedule: the 30-minute retry comes in a second", async () => {
    h = startEngineHarness();
    const r = await receiver(() => ({ status: 500 }));
    const { deliveryId } = h.deliver(h.endpoint(r.url).id);
    await r.nth(1);
    for (const [delay, count] of [[5000, 2], [5 * minute, 3], [30 * minute, 4]] as const) {
      await waitUntil(() => h.queue.delivery(deliveryId)!.attempts.length === count - 1, `attempt ${count - 1} is recorded`);
      const took = await advanceAndTime(r, delay, count);
      assert.ok(took < 1000, `retry ${count - 1} came ${took.toFixed(0)} ms after the jump`);
    }
  });
});
