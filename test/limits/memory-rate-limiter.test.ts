import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRateLimiter } from "../../src/limits/memory-rate-limiter.js";
import { createManualClock } from "../support/manual-clock.js";

describe("createMemoryRateLimiter", () => {
  it("lets a burst through, then refuses with the time until the next token", () => {
    const clock = createManualClock();
    const limiter = createMemoryRateLimiter({ ratePerSecond: 4, burst: 3, clock });
    assert.deepEqual([1, 2, 3].map(() => limiter.take("k")), [{ allowed: true }, { allowed: true }, { allowed: true }]);
    assert.deepEqual(limiter.take("k"), { allowed: false, retryAfterMs: 250 });
    clock.advance(100);
    assert.deepEqual(limiter.take("k"), { allowed: false, retryAfterMs: 150 });
    clock.advance(150);
    assert.deepEqual(limiter.take("k"), { allowed: true });
    assert.deepEqual(limiter.take("k"), { allowed: false, retryAfterMs: 250 });
  });

  it("refills at the sustained rate and never above the burst", () => {
    const clock = createManualClock();
    const limiter = createMemoryRateLimiter({ ratePerSecond: 10, burst: 2, clock });
    limiter.take("k");
    limiter.take("k");
    clock.advance(60_000);
    const allowed = [1, 2, 3].map(() => limiter.take("k").allowed);
    assert.deepEqual(allowed, [true, true, false]);
  });

  it("keeps one bucket per key", () => {
    const clock = createManualClock();
    const limiter = createMemoryRateLimiter({ ratePerSecond: 1, burst: 1, clock });
    assert.equal(limiter.take("a").allowed, true);
    assert.equal(limiter.take("a").allowed, false);
    assert.equal(limiter.take("b").allowed, true);
  });

  it("tracks at most maxKeys keys, forgetting the least recently used", () => {
    const clock = createManualClock();
    const limiter = createMemoryRateLimiter({ ratePerSecond: 1, burst: 1, clock, maxKeys: 3 });
    for (let i = 0; i < 1000; i++) limiter.take(`key-${i}`);
    assert.equal(limiter.size, 3);
    // key-997..999 are tracked (empty buckets); key-0 was forgotten and starts full.
    assert.equal(limiter.take("key-999").allowed, false);
    assert.equal(limiter.take("key-0").allowed, true);
  });

  it("does not drain or fill a bucket when the clock steps back", () => {
    const clock = createManualClock("2025-01-01T00:00:10.000Z");
    const limiter = createMemoryRateLimiter({ ratePerSecond: 1, burst: 1, clock });
    assert.equal(limiter.take("k").allowed, true);
    clock.set("2025-01-01T00:00:00.000Z");
    assert.deepEqual(limiter.take("k"), { allowed: false, retryAfterMs: 1000 });
    clock.advance(1000);
    assert.equal(limiter.take("k").allowed, true);
  });
});

describe("createMemoryRateLimiter as a RateLimiter", () => {
  it("answers consume like take, from the same buckets, and says it is in memory", async () => {
    const clock = createManualClock();
    const limiter = createMemoryRateLimiter({ ratePerSecond: 2, burst: 2, clock });
    assert.deepEqual(await limiter.consume("k"), { allowed: true });
    assert.deepEqual(limiter.take("k"), { allowed: true });
    assert.deepEqual(await limiter.consume("k"), { allowed: false, retryAfterMs: 500 });
    clock.advance(500);
    assert.deepEqual(await limiter.consume("k"), { allowed: true });
    assert.deepEqual(limiter.describe(), { backend: "memory" });
  });
});
