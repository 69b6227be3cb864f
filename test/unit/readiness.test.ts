import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createReadiness, type ReadinessOptions } from "../../src/observability/readiness.js";
import type { StoreHealth, StoreState } from "../../src/store/store-health.js";

/** A store whose state the test sets, counting probes and holding each one open until the test ends it. */
function fakeStore(initial: Partial<StoreState> = {}) {
  const store = {
    current: { kind: "postgres", reachable: true, since: undefined, unreachableForMs: 0, pendingMigrations: [], ...initial } as StoreState,
    probes: 0,
    endProbe: () => {},
    state: () => store.current,
    probe() {
      store.probes++;
      return new Promise<void>((resolve) => (store.endProbe = resolve));
    },
  };
  return store satisfies StoreHealth;
}

/** A monotonic clock the test moves. */
function fakeNow() {
  let ms = 1_000_000;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

const build = (store: StoreHealth, extra: Partial<ReadinessOptions> = {}) => createReadiness({ store, unreachableGraceMs: 30_000, ...extra });
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("createReadiness", () => {
  it("is ready while the store is reachable, and says so in the detail", () => {
    const since = new Date("2026-11-23T10:00:00.000Z");
    const store = fakeStore({ since, pool: { open: 2, idle: 1, waiting: 0, max: 5, saturatedCalls: 0 } });
    assert.deepEqual(build(store).check(), {
      ready: true,
      detail: {
        state: "ready",
        store: {
          kind: "postgres",
          reachable: true,
          since,
          unreachableForMs: 0,
          pendingMigrations: [],
          pool: { open: 2, idle: 1, waiting: 0, max: 5, saturatedCalls: 0 },
          notReadyAfterMs: 30_000,
        },
      },
    });
  });

  it("stays ready while the store is unreachable for up to the grace, then is not ready", () => {
    const store = fakeStore({ reachable: false, unreachableForMs: 30_000, lastFailure: { reason: "the connection failed (ECONNREFUSED)", at: new Date(0) } });
    const readiness = build(store);
    const within = readiness.check();
    assert.equal(within.ready, true);
    assert.equal(within.detail.store.reachable, false);
    assert.equal(within.detail.store.lastFailure?.reason, "the connection failed (ECONNREFUSED)");
    store.current = { ...store.current, unreachableForMs: 30_001 };
    const past = readiness.check();
    assert.equal(past.ready, false);
    assert.equal(!past.ready && past.reason, "the store has been unreachable for longer than 30 s");
    assert.equal(past.detail.state, "store unreachable");
    store.current = { ...store.current, reachable: true, unreachableForMs: 0 };
    assert.equal(readiness.check().ready, true);
  });

  it("never reads a full pool or waiting calls as a reason", () => {
    const store = fakeStore({ pool: { open: 5, idle: 0, waiting: 400, max: 5, saturatedCalls: 9000 } });
    assert.equal(build(store).check().ready, true);
  });

  it("probes an unreachable store at most once per probeIntervalMs, one probe at a time, and never a reachable one", async () => {
    const clock = fakeNow();
    const store = fakeStore();
    const readiness = build(store, { now: clock.now, probeIntervalMs: 1000 });
    for (let i = 0; i < 5; i++) readiness.check();
    assert.equal(store.probes, 0, "probed a reachable store");

    store.current = { ...store.current, reachable: false, unreachableForMs: 10 };
    for (let i = 0; i < 5; i++) readiness.check();
    assert.equal(store.probes, 1);
    clock.advance(5000);
    readiness.check();
    assert.equal(store.probes, 1, "a second probe while the first was in flight");
    store.endProbe();
    await tick();
    readiness.check();
    assert.equal(store.probes, 2);
    store.endProbe();
    await tick();
    clock.advance(999);
    readiness.check();
    assert.equal(store.probes, 2);
    clock.advance(1);
    readiness.check();
    assert.equal(store.probes, 3);
  });

  it("is not ready while migrations are pending, and ready once none are or when they cannot be read", () => {
    const store = fakeStore({ pendingMigrations: ["Migration20261123000000_methods_array"] });
    const readiness = build(store);
    const pending = readiness.check();
    assert.equal(pending.ready, false);
    assert.equal(!pending.ready && pending.reason, "database migrations are pending: apply them (npm run db:migrate)");
    assert.deepEqual(pending.detail.store.pendingMigrations, ["Migration20261123000000_methods_array"]);
    store.current = { ...store.current, pendingMigrations: undefined };
    assert.equal(readiness.check().ready, true);
    store.current = { ...store.current, pendingMigrations: [] };
    assert.equal(readiness.check().ready, true);
  });

  it("is starting until started(), and never ready again once shutdown begins", () => {
    const readiness = build(fakeStore(), { starting: true });
    assert.deepEqual(
      (({ ready, reason }) => ({ ready, reason }))(readiness.check() as { ready: boolean; reason: string }),
      { ready: false, reason: "the server is starting" },
    );
    assert.equal(readiness.check().detail.state, "starting");
    readiness.started();
    assert.equal(readiness.check().ready, true);
    readiness.beginShutdown();
    assert.equal(readiness.shuttingDown, true);
    const draining = readiness.check();
    assert.equal(!draining.ready && draining.reason, "the server is shutting down");
    assert.equal(draining.detail.state, "draining");
    readiness.started();
    assert.equal(readiness.check().ready, false);
  });

  it("reads every extra detail at each check", () => {
    let backend = "redis";
    const readiness = build(fakeStore(), { details: { rateLimits: () => ({ backend }) } });
    assert.deepEqual(readiness.check().detail.rateLimits, { backend: "redis" });
    backend = "memory";
    assert.deepEqual(readiness.check().detail.rateLimits, { backend: "memory" });
  });

  it("tells onChange once per change of verdict", () => {
    const store = fakeStore({ pendingMigrations: ["m1"] });
    const seen: string[] = [];
    const readiness = build(store, { onChange: (state) => seen.push(state.detail.state) });
    readiness.check();
    readiness.check();
    store.current = { ...store.current, pendingMigrations: [] };
    readiness.check();
    readiness.check();
    assert.deepEqual(seen, ["migrations pending", "ready"]);
  });
});
