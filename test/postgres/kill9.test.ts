import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runCrash } from "../../drills/crash.js";
import { formatDrillReport } from "../../drills/support/drill-report.js";
import { postgresUnavailable } from "../support/postgres.js";

const skip = await postgresUnavailable();

/**
 * Durability (issue 3): the crash drill, bounded. A server process on a fresh
 * database takes a burst of creates (two methods and a split each) and is
 * killed with SIGKILL mid-burst; after a restart every create answered 2xx
 * (and only for the reference it was sent) reads back whole, and no stored
 * intent lacks its methods or its split. The drill decides the verdict; its
 * figures go to the test output.
 */
describe("PostgreSQL durability across SIGKILL", { skip, timeout: 45_000 }, () => {
  it("keeps every create it acknowledged, whole, when killed in the middle of a burst", async () => {
    const report = await runCrash({ concurrency: 8, burstMs: 1500 });
    process.stdout.write(`${formatDrillReport(report).replace(/^/gm, "# ")}\n`);
    assert.ok(report.passed, `${report.headline}\n${report.figures.join("\n")}`);
  });
});
