import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createAdvanceableClock } from "../../src/lib/advanceable-clock.js";
import { createManualClock } from "../support/manual-clock.js";

describe("createAdvanceableClock", () => {
  it("reads the base clock until advanced, then the base plus every advance", () => {
    const base = createManualClock("2026-01-01T00:00:00.000Z");
    const clock = createAdvanceableClock(base);
    assert.equal(clock.now().toISOString(), "2026-01-01T00:00:00.000Z");
    base.advance(1500);
    assert.equal(clock.now().toISOString(), "2026-01-01T00:00:01.500Z");
    assert.equal(clock.advance(30 * 60_000).toISOString(), "2026-01-01T00:30:01.500Z");
    base.advance(1000);
    assert.equal(clock.now().toISOString(), "2026-01-01T00:30:02.500Z");
    clock.advance(86_400_000);
    assert.equal(clock.now().toISOString(), "2026-01-02T00:30:02.500Z");
  });

  it("never goes back when the base does, and an advance still moves it by the full amount", () => {
    const base = createManualClock("2026-01-01T00:00:10.000Z");
    const clock = createAdvanceableClock(base);
    assert.equal(clock.now().toISOString(), "2026-01-01T00:00:10.000Z");
    base.set("2026-01-01T00:00:00.000Z");
    assert.equal(clock.now().toISOString(), "2026-01-01T00:00:10.000Z");
    assert.equal(clock.advance(5000).toISOString(), "2026-01-01T00:00:15.000Z");
    assert.equal(clock.now().toISOString(), "2026-01-01T00:00:15.000Z");
    base.set("2026-01-01T00:00:20.000Z");
    assert.equal(clock.now().toISOString(), "2026-01-01T00:00:25.000Z");
  });

  it("tells listeners after each advance, until they unsubscribe", () => {
    const clock = createAdvanceableClock(createManualClock("2026-01-01T00:00:00.000Z"));
    const seen: string[] = [];
    const stop = clock.onAdvance((now) => seen.push(now.toISOString()));
    clock.advance(1000);
    stop();
    clock.advance(1000);
    assert.deepEqual(seen, ["2026-01-01T00:00:01.000Z"]);
  });

  it("refuses to go back or stand still", () => {
    const clock = createAdvanceableClock(createManualClock());
    for (const ms of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => clock.advance(ms), RangeError);
  });
});
