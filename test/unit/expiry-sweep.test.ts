import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { silentLogger } from "../../src/lib/logger.js";
import { startExpirySweep } from "../../src/server/expiry-sweep.js";
import type { PaymentExpiry } from "../../src/service/payment-expiry.js";

/** An expiry whose sweeps the test finishes by hand. */
function manualExpiry() {
  const pending: (() => void)[] = [];
  const expiry: PaymentExpiry = {
    settle: async (record) => record,
    sweep: () => new Promise<number>((resolve) => pending.push(() => resolve(0))),
  };
  return { expiry, pending, finish: () => pending.shift()!() };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("startExpirySweep", () => {
  it("sweeps at once on wake(), not only on its timer", async () => {
    const manual = manualExpiry();
    const sweep = startExpirySweep({ expiry: manual.expiry, intervalMs: 3_600_000, logger: silentLogger });
    assert.equal(manual.pending.length, 0);
    sweep.wake();
    assert.equal(manual.pending.length, 1);
    manual.finish();
    sweep.stop();
  });

  it("runs one more sweep after the current one when woken meanwhile, however often", async () => {
    const manual = manualExpiry();
    const sweep = startExpirySweep({ expiry: manual.expiry, intervalMs: 3_600_000, logger: silentLogger });
    sweep.wake();
    sweep.wake();
    sweep.wake();
    assert.equal(manual.pending.length, 1, "never two sweeps at once");
    manual.finish();
    await tick();
    assert.equal(manual.pending.length, 1, "one follow-up sweep");
    manual.finish();
    await tick();
    assert.equal(manual.pending.length, 0);
    sweep.stop();
  });

  it("does nothing on wake() once stopped", async () => {
    const manual = manualExpiry();
    const sweep = startExpirySweep({ expiry: manual.expiry, intervalMs: 3_600_000, logger: silentLogger });
    sweep.stop();
    sweep.wake();
    assert.equal(manual.pending.length, 0);
  });
});
