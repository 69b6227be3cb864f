import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryStores } from "../../src/store/memory/create-memory-stores.js";
import { at, intentId, intentRecord } from "./contract-records.js";

describe("memory intent store: list cost", () => {
  it("reads a page of 50 of a merchant's 1,000 intents without touching the other merchants' 20,000", async () => {
    const { intents } = createMemoryStores();
    // Other merchants' intents first, interleaved in time with the measured one's.
    for (let i = 0; i < 21_000; i++) {
      const merchantId = i % 21 === 0 ? "measured" : `other-${i % 20}`;
      await intents.insert(intentRecord({ id: intentId(i + 1), merchantId, clientReference: `r-${i}`, createdAt: at(i) }));
    }
    const first = await intents.list({ livemode: false, merchantId: "measured", limit: 50, now: at(0) });
    assert.equal(first.length, 50);
    const cursor = { createdAt: first[49]!.intent.createdAt, id: first[49]!.intent.id };

    const page = (i: number) => intents.list({ livemode: false, merchantId: "measured", limit: 50, now: at(0), after: i % 2 === 0 ? undefined : cursor });
    // Warm up first: what is measured is the steady state, not the compiler.
    for (let i = 0; i < 1_000; i++) await page(i);
    const rounds = 5_000;
    const started = performance.now();
    for (let i = 0; i < rounds; i++) await page(i);
    const microseconds = ((performance.now() - started) * 1000) / rounds;
    process.stdout.write(`# memory store: a page of 50 of 1,000 intents in ${microseconds.toFixed(1)} µs\n`);
    // The target is well under 100 µs; the bound leaves room for a busy machine.
    assert.ok(microseconds < 200, `${microseconds.toFixed(1)} µs per page`);
  });
});
