import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createMemoryDeliveryQueue } from "../../src/store/memory/memory-delivery-queue.js";

/**
 * A claim costs the endpoints with something pending, not the backlog
 * (issue 21 §2): the memory queue's claim walked every pending delivery, so
 * one claim-and-complete cycle behind a backlog of 20,000 took ~10 times one
 * behind 2,000, and draining n deliveries cost n². Timing: test:all only.
 */
// A full collection before each timed stretch: building 40,000 deliveries leaves garbage whose collection would
// otherwise land in the larger backlog's stretch and measure the collector, not the claim.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

describe("memory delivery queue under a backlog", () => {
  /** Milliseconds spent claiming in `cycles` claim-and-complete rounds of 8 deliveries (4 per endpoint), behind `backlog` pending ones. */
  async function cycleTime(backlog: number, cycles: number): Promise<number> {
    const queue = createMemoryDeliveryQueue();
    queue.putEndpoint({ id: "we_1", merchantId: "m_1", url: "https://a.example.com/", secrets: [] });
    queue.putEndpoint({ id: "we_2", merchantId: "m_2", url: "https://b.example.com/", secrets: [] });
    for (let i = 0; i < backlog; i++) {
      queue.enqueue({ id: `whd_${i}`, eventId: `evt_${i}`, eventType: "t", endpointId: i % 2 === 0 ? "we_1" : "we_2", body: "{}", createdAt: new Date(i) });
    }
    const now = new Date(backlog + 1);
    collectGarbage();
    let claiming = 0;
    for (let c = 0; c < cycles; c++) {
      const started = performance.now();
      const claimed = await queue.claim({ now, owner: "t", leaseMs: 60_000, limit: 8, perEndpointLimit: 4 });
      claiming += performance.now() - started;
      assert.equal(claimed.length, 8);
      for (const d of claimed) {
        await queue.complete({
          lease: d.lease,
          attempt: { at: now, statusCode: 204, durationMs: 1, error: null },
          next: { status: "succeeded" },
          endpoint: { kind: "succeeded" },
        });
      }
    }
    return claiming;
  }

  it("takes about as long per claim behind 40,000 pending deliveries as behind 4,000", async () => {
    await cycleTime(4000, 50);
    const small = Math.min(await cycleTime(4000, 200), await cycleTime(4000, 200));
    const large = Math.min(await cycleTime(40_000, 200), await cycleTime(40_000, 200));
    assert.ok(large < small * 3, `200 cycles: ${small.toFixed(1)} ms behind 4,000, ${large.toFixed(1)} ms behind 40,000`);
  });
});
