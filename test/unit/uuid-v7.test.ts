import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Clock } from "../../src/lib/clock.js";
import { createUuidV7 } from "../../src/lib/uuid-v7.js";

const start = Date.parse("2024-05-01T10:00:00.123Z");
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A clock whose n-th reading (from 0) is times(n) milliseconds. */
function scriptedClock(times: (call: number) => number): Clock {
  let call = 0;
  return { now: () => new Date(times(call++)) };
}

/** The unix_ts_ms field: the first 48 bits (RFC 9562 §5.7). */
function timestampOf(uuid: string): number {
  return parseInt(uuid.replace(/-/g, "").slice(0, 12), 16);
}

function generate(clock: Clock, count: number): string[] {
  const next = createUuidV7(clock);
  return Array.from({ length: count }, () => next());
}

function assertStrictlyIncreasing(ids: string[]): void {
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i - 1]! < ids[i]!, `id ${i} ${ids[i]} does not sort after ${ids[i - 1]}`);
  }
}

describe("createUuidV7", () => {
  const clocks: { name: string; clock: () => Clock }[] = [
    { name: "a frozen clock", clock: () => scriptedClock(() => start) },
    { name: "a clock that steps back 1 ms on every call", clock: () => scriptedClock((call) => start - call) },
    { name: "a clock that jumps back an hour halfway", clock: () => scriptedClock((call) => (call < 5000 ? start + call : start - 3_600_000 + call)) },
    { name: "a clock that moves 1 ms every 3 calls", clock: () => scriptedClock((call) => start + Math.floor(call / 3)) },
  ];

  for (const { name, clock } of clocks) {
    it(`makes 10,000 strictly increasing ids with ${name}`, () => {
      const ids = generate(clock(), 10_000);
      assertStrictlyIncreasing(ids);
      assert.equal(new Set(ids).size, ids.length);
    });
  }

  it("sets version 7 and the RFC 9562 variant bits on every id", () => {
    for (const id of generate(scriptedClock((call) => start + (call % 7) - 3), 2000)) {
      assert.match(id, uuidPattern);
      assert.equal(id[14], "7", `version nibble of ${id}`);
      assert.match(id[19]!, /[89ab]/, `variant of ${id}`);
    }
  });

  it("embeds the clock's milliseconds when the clock moves forward", () => {
    const times = [start, start + 1, start + 2, start + 1000, start + 86_400_000, 2 ** 47];
    const ids = generate(scriptedClock((call) => times[call]!), times.length);
    assert.deepEqual(ids.map(timestampOf), times);
  });

  it("keeps the last timestamp when the clock steps back", () => {
    const ids = generate(scriptedClock((call) => (call === 0 ? start : start - 5000)), 3);
    assert.deepEqual(ids.map(timestampOf), [start, start, start]);
  });

  it("stays within a few milliseconds of a frozen clock while counting 10,000 ids", () => {
    // The 12-bit counter is seeded below 2^11, so each borrowed millisecond
    // holds at least 2^11 ids: 10,000 ids need at most 5 of them.
    const stamps = generate(scriptedClock(() => start), 10_000).map(timestampOf);
    assert.equal(stamps[0], start);
    assert.ok(stamps[stamps.length - 1]! <= start + 5, `drifted to +${stamps[stamps.length - 1]! - start} ms`);
  });

  it("fills the rest with randomness: two generators on one frozen clock do not collide", () => {
    const a = generate(scriptedClock(() => start), 100);
    const b = generate(scriptedClock(() => start), 100);
    assert.equal(new Set([...a, ...b]).size, 200);
  });
});
