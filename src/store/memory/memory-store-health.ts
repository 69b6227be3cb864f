import type { StoreHealth, StoreState } from "../store-health.js";

/** createMemoryStoreHealth: the in-memory stores live in the process, so they are always reachable and have no schema. */
export function createMemoryStoreHealth(): StoreHealth {
  const state: StoreState = { kind: "memory", reachable: true, since: undefined, unreachableForMs: 0, pendingMigrations: [] };
  return { state: () => state, probe: async () => {} };
}
