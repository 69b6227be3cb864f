/**
 * BoundedTtlCache remembers values for a fixed time and at most maxEntries of
 * them: when full, the oldest entry is forgotten first (a Map iterates in
 * insertion order). Times come from the injected clock.
 */
export interface BoundedTtlCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
  clear(): void;
  readonly size: number;
}

export function createBoundedTtlCache<V>(options: { ttlMs: number; maxEntries: number; now: () => number }): BoundedTtlCache<V> {
  const entries = new Map<string, { value: V; until: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.until > options.now()) return entry.value;
      entries.delete(key);
      return undefined;
    },
    set(key, value) {
      entries.delete(key);
      if (entries.size >= options.maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      entries.set(key, { value, until: options.now() + options.ttlMs });
    },
    delete: (key) => void entries.delete(key),
    clear: () => entries.clear(),
    get size() {
      return entries.size;
    },
  };
}
