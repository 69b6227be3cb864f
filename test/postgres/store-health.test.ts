import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSystemClock } from "../../src/lib/clock.js";
import { createReadiness } from "../../src/server/readiness.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable } from "../support/postgres.js";

const unavailable = await postgresUnavailable();

describe("PostgreSQL store health", { skip: unavailable }, () => {
  it("answers select 1 while the database is there, and fails once it is gone", async () => {
    const db = await createTestDatabase();
    const stores = await openMigratedStores(db.url, { statementTimeoutMs: 1000 });
    try {
      await stores.health.ping();
      const readiness = createReadiness({ store: stores.health, clock: createSystemClock(), timeoutMs: 2000, cacheMs: 0 });
      assert.deepEqual(await readiness.check(), { ready: true });

      // "with (force)" ends the pool's connections too: the next ping must fail, not hang.
      await db.drop();
      await assert.rejects(stores.health.ping());
      const started = performance.now();
      assert.deepEqual(await readiness.check(), { ready: false, reason: "the store is unreachable" });
      assert.ok(performance.now() - started < 2500);
    } finally {
      await stores.close().catch(() => {});
      await db.drop();
    }
  });
});
