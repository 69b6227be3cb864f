import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createAdvanceableClock } from "../../src/lib/advanceable-clock.js";
import { createEventRetention } from "../../src/service/event-retention.js";

const start = new Date("2026-12-05T16:00:00.000Z");
const fixedClock = { now: () => new Date(start) };

/** A store holding `stored` deletable events, recording each call. */
function storeWith(stored: number) {
  const calls: { before: string; limit: number }[] = [];
  let left = stored;
  return {
    calls,
    events: {
      async deleteRecordedBefore(before: Date, limit: number) {
        calls.push({ before: before.toISOString(), limit });
        const deleted = Math.min(left, limit);
        left -= deleted;
        return deleted;
      },
    },
  };
}

describe("event retention", () => {
  it("deletes what was recorded more than retentionDays ago, in batches, until a batch comes back short", async () => {
    const store = storeWith(2500);
    const retention = createEventRetention({ events: store.events, clock: fixedClock, retentionDays: 30, batchSize: 1000 });
    assert.equal(await retention.sweep(), 2500);
    assert.deepEqual(store.calls, [
      { before: "2026-11-05T16:00:00.000Z", limit: 1000 },
      { before: "2026-11-05T16:00:00.000Z", limit: 1000 },
      { before: "2026-11-05T16:00:00.000Z", limit: 1000 },
    ]);
  });

  it("stops a round at maxPerRound, leaving the rest to the next round", async () => {
    const store = storeWith(2500);
    const retention = createEventRetention({ events: store.events, clock: fixedClock, retentionDays: 30, batchSize: 1000, maxPerRound: 1500 });
    assert.equal(await retention.sweep(), 1500);
    assert.deepEqual(
      store.calls.map((call) => call.limit),
      [1000, 500],
    );
    assert.equal(await retention.sweep(), 1000);
  });

  it("follows the service's clock, so the sandbox's test clock moves the cut-off", async () => {
    const clock = createAdvanceableClock(fixedClock);
    const store = storeWith(0);
    const retention = createEventRetention({ events: store.events, clock, retentionDays: 45 });
    await retention.sweep();
    clock.advance(86_400_000);
    await retention.sweep();
    assert.deepEqual(
      store.calls.map((call) => call.before),
      ["2026-10-21T16:00:00.000Z", "2026-10-22T16:00:00.000Z"],
    );
  });
});
