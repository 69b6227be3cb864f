import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRetryAfter } from "../../src/webhooks/retry-after.js";
import { createRetryPolicy, defaultRetrySchedule, parseRetrySchedule } from "../../src/webhooks/retry-policy.js";
import type { SendResult } from "../../src/webhooks/webhook-sender.js";

const now = new Date("2026-03-01T12:00:00.000Z");
const at = (ms: number) => new Date(now.getTime() + ms);
const days = (n: number) => n * 86_400_000;
const result = (outcome: SendResult["outcome"], fields: Partial<SendResult> = {}): SendResult => ({
  outcome,
  statusCode: null,
  retryAfterMs: null,
  durationMs: 12,
  error: null,
  ...fields,
});

describe("parseRetrySchedule", () => {
  it("reads the default schedule as 7 delays", () => {
    assert.deepEqual(parseRetrySchedule(defaultRetrySchedule), [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    assert.deepEqual(parseRetrySchedule(" 250ms, 1s ,2m,1d "), [250, 1000, 120_000, 86_400_000]);
  });

  it("refuses empty parts, unknown units, zero, more than 7 days and more than 20 delays", () => {
    for (const text of ["", "5s,", "5", "5 s", "5sec", "0s", "8d", "-5s", "1.5s", Array(21).fill("1s").join(",")]) {
      assert.throws(() => parseRetrySchedule(text), /1 to 20 comma-separated delays/, JSON.stringify(text));
    }
  });
});

describe("createRetryPolicy", () => {
  const schedule = parseRetrySchedule("5s,5m,30m");
  const exact = createRetryPolicy({ schedule, random: () => 0.5 });
  const pending = (ms: number) => ({ status: "pending", nextAttemptAt: at(ms) });
  const failing = { kind: "failed", at: now, disableIfFailingSince: new Date(now.getTime() - days(5)) };

  it("succeeds on 2xx and clears the endpoint's failing state", () => {
    assert.deepEqual(exact.decide(result("success", { statusCode: 200 }), 1, now), { next: { status: "succeeded" }, endpoint: { kind: "succeeded" } });
    assert.deepEqual(exact.decide(result("success", { statusCode: 204 }), 4, now).next, { status: "succeeded" });
  });

  it("retries every other result after the schedule's next delay, then fails after the last", () => {
    assert.equal(exact.maxAttempts, 4);
    for (const outcome of ["http-error", "timeout", "connection-error", "refused-address"] as const) {
      // An endpoint that does not answer or refuses pauses its other deliveries until this retry; an HTTP error does not.
      const endpoint = outcome === "http-error" ? failing : { ...failing, pauseUntil: at(5000) };
      assert.deepEqual(exact.decide(result(outcome), 1, now), { next: pending(5000), endpoint }, outcome);
      assert.deepEqual(exact.decide(result(outcome), 2, now).next, pending(300_000), outcome);
      assert.deepEqual(exact.decide(result(outcome), 3, now).next, pending(1_800_000), outcome);
      assert.deepEqual(exact.decide(result(outcome), 4, now), { next: { status: "failed" }, endpoint: failing }, outcome);
    }
  });

  it("fails on 410 at once and disables the endpoint", () => {
    assert.deepEqual(exact.decide(result("gone", { statusCode: 410 }), 1, now), { next: { status: "failed" }, endpoint: { kind: "gone" } });
  });

  it("spreads each delay by ±10 %", () => {
    const low = createRetryPolicy({ schedule, random: () => 0 });
    const high = createRetryPolicy({ schedule, random: () => 0.999999 });
    assert.deepEqual(low.decide(result("timeout"), 2, now).next, pending(270_000));
    assert.deepEqual(high.decide(result("timeout"), 2, now).next, pending(330_000));
    const none = createRetryPolicy({ schedule, jitter: 0, random: () => 0 });
    assert.deepEqual(none.decide(result("timeout"), 2, now).next, pending(300_000));
  });

  it("takes Retry-After as a floor on the delay, capped at 24 hours", () => {
    const throttled = (retryAfterMs: number) => result("http-error", { statusCode: 429, retryAfterMs });
    assert.deepEqual(exact.decide(throttled(120_000), 1, now).next, pending(120_000), "longer than the 5 s step: waits 2 minutes");
    assert.deepEqual(exact.decide(throttled(1000), 2, now).next, pending(300_000), "shorter than the step: the step");
    assert.deepEqual(exact.decide(throttled(days(30)), 1, now).next, pending(days(1)), "capped");
    assert.deepEqual(exact.decide(throttled(120_000), 4, now).next, { status: "failed" }, "never adds attempts");
  });

  it("asks to disable an endpoint failing since 5 days (or the configured span)", () => {
    const quick = createRetryPolicy({ schedule, random: () => 0.5, disableAfterFailingMs: 60_000 });
    assert.deepEqual(quick.decide(result("http-error"), 1, now).endpoint, { kind: "failed", at: now, disableIfFailingSince: at(-60_000) });
  });

  it("refuses to decide an aborted attempt", () => {
    assert.throws(() => exact.decide(result("aborted"), 1, now), /released, not decided/);
  });
});

describe("parseRetryAfter", () => {
  const reference = new Date("1994-11-06T08:49:00.000Z");
  const table: [string | undefined, number | null][] = [
    ["120", 120_000],
    ["0", 0],
    [" 5 ", 5000],
    ["Sun, 06 Nov 1994 08:49:37 GMT", 37_000],
    ["Sunday, 06-Nov-94 08:49:37 GMT", 37_000],
    ["Sun Nov  6 08:49:37 1994", 37_000],
    ["Sun, 06 Nov 1994 08:40:00 GMT", 0],
    [undefined, null],
    ["", null],
    ["soon", null],
    ["-1", null],
    ["1.5", null],
    ["2026-01-01T00:00:00Z", null],
  ];
  for (const [header, expected] of table) {
    it(`${JSON.stringify(header)} → ${expected}`, () => assert.equal(parseRetryAfter(header, reference), expected));
  }
});
