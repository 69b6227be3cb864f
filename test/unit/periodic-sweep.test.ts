import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { silentLogger } from "../../src/lib/logger.js";
import { startPeriodicSweep } from "../../src/server/periodic-sweep.js";

/** A round the test finishes by hand. */
function manualRounds() {
  const pending: (() => void)[] = [];
  const run = () => new Promise<number>((resolve) => pending.push(() => resolve(0)));
  return { run, pending, finish: () => pending.shift()!() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("startPeriodicSweep", () => {
  it("sweeps at once on wake(), not only on its timer", async () => {
    const manual = manualRounds();
    const sweep = startPeriodicSweep({ run: manual.run, intervalMs: 3_600_000, logger: silentLogger, done: (n) => [{ n }, "swept"], failed: "failed" });
    assert.equal(manual.pending.length, 0);
    sweep.wake();
    assert.equal(manual.pending.length, 1);
    manual.finish();
    sweep.stop();
  });

  it("runs one more sweep after the current one when woken meanwhile, however often", async () => {
    const manual = manualRounds();
    const sweep = startPeriodicSweep({ run: manual.run, intervalMs: 3_600_000, logger: silentLogger, done: (n) => [{ n }, "swept"], failed: "failed" });
    sweep.wake();
    sweep.wake();
    sweep.wake();
    assert.equal(manual.pending.length, 1, "never two rounds at once");
    manual.finish();
    await tick();
    assert.equal(manual.pending.length, 1, "one follow-up round");
    manual.finish();
    await tick();
    assert.equal(manual.pending.length, 0);
    sweep.stop();
  });

  it("does nothing on wake() once stopped", async () => {
    const manual = manualRounds();
    const sweep = startPeriodicSweep({ run: manual.run, intervalMs: 3_600_000, logger: silentLogger, done: (n) => [{ n }, "swept"], failed: "failed" });
    sweep.stop();
    sweep.wake();
    assert.equal(manual.pending.length, 0);
  });
});
