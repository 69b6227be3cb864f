import type { StoreHealth } from "../store-health.js";

/** createMemoryStoreHealth: the in-memory stores live in the process, so they are always reachable. */
export function createMemoryStoreHealth(): StoreHealth {
  return { ping: async () => {} };
}
