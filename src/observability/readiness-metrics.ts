import { Gauge, type Registry } from "prom-client";
import type { Readiness } from "./readiness.js";

/**
 * registerReadinessMetrics exposes what /readyz decides from, read at each
 * scrape (nothing is sampled in between): whether the instance is ready,
 * whether its database answers and for how long it has not, its pool, and
 * pending migrations. During an outage shared by every instance, all stay
 * ready for the grace while these show the database's state.
 */
export function registerReadinessMetrics(registry: Registry, readiness: Pick<Readiness, "check">): void {
  const registers = [registry];
  // A check reads state the pool keeps; it sends nothing, so each gauge makes its own.
  const read = () => readiness.check();

  new Gauge({
    name: "payments_ready",
    help: "1 when this instance says it should receive traffic (GET /readyz 200), else 0.",
    registers,
    collect() {
      this.set(read().ready ? 1 : 0);
    },
  });
  new Gauge({
    name: "payments_database_reachable",
    help: "1 while the store's calls reach the database (or it has not failed since the last answer), 0 while every attempt fails.",
    registers,
    collect() {
      this.set(read().detail.store.reachable ? 1 : 0);
    },
  });
  new Gauge({
    name: "payments_database_unreachable_seconds",
    help: "How long every attempt to reach the database has failed; 0 while it answers. Past DB_UNREADY_AFTER_MS the instance is not ready.",
    registers,
    collect() {
      this.set(read().detail.store.unreachableForMs / 1000);
    },
  });
  new Gauge({
    name: "payments_database_pool_connections",
    help: "Database connections of this instance's pool, by state (idle, busy).",
    labelNames: ["state"] as const,
    registers,
    collect() {
      const pool = read().detail.store.pool;
      this.set({ state: "idle" }, pool?.idle ?? 0);
      this.set({ state: "busy" }, pool ? pool.open - pool.idle : 0);
    },
  });
  new Gauge({
    name: "payments_database_pool_waiting",
    help: "Store calls waiting for a connection of a full pool.",
    registers,
    collect() {
      this.set(read().detail.store.pool?.waiting ?? 0);
    },
  });
  new Gauge({
    name: "payments_database_pool_saturated_calls",
    help: "Store calls answered 503 since start because no pooled connection came free within the deadline (nothing was sent).",
    registers,
    collect() {
      this.set(read().detail.store.pool?.saturatedCalls ?? 0);
    },
  });
  new Gauge({
    name: "payments_database_pending_migrations",
    help: "Migrations this code needs that the database lacks (watched when MIGRATE_ON_START=false); the instance is not ready while above 0.",
    registers,
    collect() {
      this.set(read().detail.store.pendingMigrations?.length ?? 0);
    },
  });
}
