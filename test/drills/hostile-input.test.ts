import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { describeHostileInput, runHostileInput, type FuzzKind } from "../../drills/hostile-input.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { memoryDrillTarget } from "./support/memory-drill-target.js";

/** A few thousand cases in all: the bounded CI version of `npm run drills`. */
const runs: Record<FuzzKind, number> = {
  "rest-bodies": 700,
  "query-strings": 300,
  paths: 500,
  headers: 300,
  "connect-json": 400,
};

describe("hostile input (fast-check)", { timeout: 60_000 }, () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ store: "memory" });
  });
  after(() => server.close());

  it("never answers 5xx, keeps the error shape, and stores nothing it rejected", async () => {
    const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
    const result = await runHostileInput(memoryDrillTarget(server), { runs, seed });
    const report = describeHostileInput(result).join("\n");
    process.stdout.write(`# ${report.replaceAll("\n", "\n# ")}\n`);
    for (const kind of result.kinds) assert.equal(kind.failure, undefined, `${kind.kind} (replay with FUZZ_SEED=${result.seed}): ${kind.failure}`);
    assert.deepEqual(result.storedButRejected, [], report);
    assert.deepEqual(result.strayRows, [], report);
    assert.ok(result.acceptedIntents > 0, "some generated creates were valid, so storage was exercised");
    assert.ok(result.passed);
  });
});
