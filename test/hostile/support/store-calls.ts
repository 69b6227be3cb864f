/**
 * watchStoreCalls wraps every method of the given stores, in place, so a test
 * can tell whether a request reached the store at all (the app holds the same
 * objects, and looks methods up at each call). Returns the names called since
 * the last reset, and a way to undo the wrapping.
 */
export function watchStoreCalls(stores: Record<string, object>): { calls(): string[]; reset(): void; restore(): void } {
  const calls: string[] = [];
  const originals: [Record<string, unknown>, string, unknown][] = [];
  for (const [storeName, store] of Object.entries(stores)) {
    const target = store as Record<string, unknown>;
    for (const key of Object.keys(target)) {
      const original = target[key];
      if (typeof original !== "function") continue;
      originals.push([target, key, original]);
      target[key] = (...args: unknown[]) => {
        calls.push(`${storeName}.${key}`);
        return (original as (...a: unknown[]) => unknown).apply(store, args);
      };
    }
  }
  return {
    calls: () => [...calls],
    reset: () => void calls.splice(0),
    restore: () => {
      for (const [target, key, original] of originals) target[key] = original;
    },
  };
}
