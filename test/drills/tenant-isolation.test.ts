import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeTenantIsolation, runTenantIsolation, type TenantIsolationResult } from "../../drills/tenant-isolation.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { memoryDrillTarget } from "./support/memory-drill-target.js";

describe("tenant isolation", { timeout: 60_000 }, () => {
  let server: TestServer;
  let result: TenantIsolationResult;

  before(async () => {
    // The event and endpoint API on the server's own stores; the victim's receiver listens on 127.0.0.1.
    server = await startTestServer({ store: "memory", settings: { WEBHOOK_ALLOW_PRIVATE_URLS: "true" } });
    // The 404 timing comparison is the timing tier's (tenant-isolation.timing.test.ts): a few samples here.
    result = await runTenantIsolation(memoryDrillTarget(server), { timingSamples: 5, timingToleranceMs: 0.3, timingToleranceRatio: 0.3 });
    process.stdout.write(`# ${describeTenantIsolation(result).join("\n# ")}\n`);
  });
  after(() => server.close());

  it("tries every RPC of the contract", () => {
    assert.deepEqual(result.uncoveredRpcs, []);
  });

  it("answers every attempt on the victim's ids, references, page token and accounts as for something that does not exist", () => {
    assert.deepEqual(
      result.attempts.filter((x) => !x.ok),
      [],
    );
    assert.ok(result.attempts.length >= 25, `${result.attempts.length} attempts`);
  });

  it("reveals no victim value the attacker did not send", () => {
    assert.deepEqual(result.leaks, []);
  });

  it("leaves the victim's intents and accounts as they were", () => {
    assert.ok(result.victimUnchanged, result.victimChanges);
  });
});
