import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startHarness } from "../support/shutdown-harness.js";

// Timing tier (test:all): the grace period is a time, so its end is checked
// with a stopwatch (at least the grace, well under the next second).

describe("graceful shutdown, timed", () => {
  it("cuts requests still running when the grace period ends, and still exits 0", async () => {
    const { server, held, events, shutdown } = await startHarness({ graceMs: 200 });
    // Settled at once, so the cut is not an unhandled rejection while shutdown runs.
    const response = fetch(`${server.url}/held`).then(
      () => "answered",
      () => "cut",
    );
    await held.arrived;
    const started = performance.now();
    await shutdown("SIGTERM");
    const took = performance.now() - started;
    assert.ok(took >= 180 && took < 2000, `shutdown took ${Math.round(took)} ms with a 200 ms grace`);
    assert.equal(await response, "cut");
    assert.deepEqual(events, ["stores closed", "exit 0"]);
    held.release();
  });
});
