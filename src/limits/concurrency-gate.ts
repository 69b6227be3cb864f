/** ConcurrencyGate runs at most a fixed number of tasks at once; the rest wait their turn, first come first served. */
export interface ConcurrencyGate {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** createConcurrencyGate lets `limit` tasks run at once (at least 1). */
export function createConcurrencyGate(limit: number): ConcurrencyGate {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(task) {
      if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
      else running++;
      try {
        return await task();
      } finally {
        // Hand the slot straight to the next waiter, or give it back.
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
}
