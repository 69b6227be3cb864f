import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runTenantIsolation, type TenantIsolationResult } from "../../drills/tenant-isolation.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { memoryDrillTarget } from "./support/memory-drill-target.js";

// Timing tier (test:all): whether a 404 for the victim's id takes as long as
// for a random id is a comparison of medians, which a busy machine blurs.

describe("tenant isolation, timed", { timeout: 60_000 }, () => {
  let server: TestServer;
  let result: TenantIsolationResult;

  before(async () => {
    server = await startTestServer({ store: "memory", settings: { WEBHOOK_ALLOW_PRIVATE_URLS: "true" } });
    // A generous noise bound: CI machines are shared; the full drill reports the figures.
    result = await runTenantIsolation(memoryDrillTarget(server), { timingSamples: 200, timingToleranceMs: 0.3, timingToleranceRatio: 0.3 });
  });
  after(() => server.close());

  it("takes as long to answer 404 for the victim's id as for a random id", () => {
    const t = result.timing;
    assert.ok(t.withinNoise, `medians ${t.victimMedianMs.toFixed(3)} vs ${t.randomMedianMs.toFixed(3)} ms`);
  });
});
