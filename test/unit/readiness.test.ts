import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createReadiness } from "../../src/server/readiness.js";
import type { StoreHealth } from "../../src/store/store-health.js";
import { createManualClock } from "../support/manual-clock.js";

/** A store whose ping answers as the test says, counting calls. */
function scriptedStore(answer: () => Promise<void>): StoreHealth & { pings: number } {
  const store = {
    pings: 0,
    ping() {
      store.pings++;
      return answer();
    },
  };
  return store;
}

describe("createReadiness", () => {
  it("is ready while the store answers", async () => {
    const readiness = createReadiness({ store: scriptedStore(async () => {}), clock: createManualClock(), timeoutMs: 100 });
    assert.deepEqual(await readiness.check(), { ready: true });
  });

  it("is not ready when the store fails, and reports why to the log only", async () => {
    const failures: unknown[] = [];
    const readiness = createReadiness({
      store: scriptedStore(async () => {
        throw new Error("connect ECONNREFUSED 10.0.0.5:5432");
      }),
      clock: createManualClock(),
      timeoutMs: 100,
      onStoreFailure: (error) => failures.push(error),
    });
    assert.deepEqual(await readiness.check(), { ready: false, reason: "the store is unreachable" });
    assert.match(String(failures[0]), /ECONNREFUSED/);
  });

  it("is not ready when the store does not answer within timeoutMs", async () => {
    const readiness = createReadiness({ store: scriptedStore(() => new Promise(() => {})), clock: createManualClock(), timeoutMs: 50 });
    const started = performance.now();
    assert.deepEqual(await readiness.check(), { ready: false, reason: "the store is unreachable" });
    assert.ok(performance.now() - started < 1000);
  });

  it("asks the store at most once per cacheMs, and once for concurrent checks", async () => {
    const clock = createManualClock();
    const store = scriptedStore(async () => {});
    const readiness = createReadiness({ store, clock, timeoutMs: 100, cacheMs: 1000 });
    await Promise.all([readiness.check(), readiness.check(), readiness.check()]);
    assert.equal(store.pings, 1);
    clock.advance(999);
    await readiness.check();
    assert.equal(store.pings, 1);
    clock.advance(1);
    await readiness.check();
    assert.equal(store.pings, 2);
  });

  it("is never ready again once shutdown begins, even with a cached healthy answer", async () => {
    const readiness = createReadiness({ store: scriptedStore(async () => {}), clock: createManualClock(), timeoutMs: 100 });
    assert.deepEqual(await readiness.check(), { ready: true });
    readiness.beginShutdown();
    assert.equal(readiness.shuttingDown, true);
    assert.deepEqual(await readiness.check(), { ready: false, reason: "the server is shutting down" });
  });
});
