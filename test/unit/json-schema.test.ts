import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { rangeAlternatives } from "../../src/openapi/json-schema.js";

/** The numbers from 0 to max that a pattern of rangeAlternatives(lo, hi) matches. */
function matched(lo: bigint, hi: bigint, max: number): number[] {
  const pattern = new RegExp(`^(?:${rangeAlternatives(lo, hi).join("|")})$`, "u");
  return Array.from({ length: max + 1 }, (_, n) => n).filter((n) => pattern.test(String(n)));
}

describe("rangeAlternatives (int64 bounds of a response, as a pattern)", () => {
  it("matches exactly the numbers in range, for every range within 0–1200", () => {
    const bounds = [0, 1, 5, 9, 10, 11, 19, 20, 99, 100, 101, 109, 199, 200, 315, 999, 1000, 1001, 1099, 1200];
    for (const lo of bounds) {
      for (const hi of bounds.filter((b) => b >= lo)) {
        const expected = Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
        assert.deepEqual(matched(BigInt(lo), BigInt(hi), 1300), expected, `${lo}..${hi}`);
      }
    }
  });

  it("writes 1 to 10^12 (the kobo bound) compactly, with no 13-digit number but 10^12", () => {
    assert.deepEqual(rangeAlternatives(1n, 1_000_000_000_000n), ["[1-9][0-9]{0,11}", "1000000000000"]);
  });
});
