/** ConnectionSweep calls every registered check on one shared timer. */
export interface ConnectionSweep {
  /** add registers check; the function it returns removes it. */
  add(check: (now: number) => void): () => void;
  stop(): void;
}

/**
 * createConnectionSweep looks at every open connection every intervalMs,
 * with one timer for all of them rather than several per connection: a few
 * thousand connections cost a few thousand cheap reads a tick. The timer does
 * not keep the process alive.
 */
export function createConnectionSweep(intervalMs: number, now: () => number = () => performance.now()): ConnectionSweep {
  const checks = new Set<(now: number) => void>();
  const timer = setInterval(() => {
    const at = now();
    for (const check of checks) check(at);
  }, intervalMs);
  timer.unref();
  return {
    add(check) {
      checks.add(check);
      return () => checks.delete(check);
    },
    stop: () => clearInterval(timer),
  };
}
