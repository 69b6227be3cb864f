import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createIsoTime } from "../../src/lib/iso-time.js";

describe("createIsoTime", () => {
  it("writes exactly what Date.prototype.toISOString writes, at day and year edges and outside 0000–9999", () => {
    const iso = createIsoTime();
    const edges = [0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, -1, -86_400_001, 951_782_400_000, 253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_001];
    for (const ms of edges) assert.equal(iso(ms), new Date(ms).toISOString(), `at ${ms}`);
  });

  it("agrees with toISOString on 200,000 random times, in and out of order", () => {
    const iso = createIsoTime();
    for (let i = 0; i < 200_000; i++) {
      const ms = Math.floor(Math.random() * 4e12) - 1e12;
      assert.equal(iso(ms), new Date(ms).toISOString());
    }
  });
});
