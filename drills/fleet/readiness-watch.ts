/** ReadinessWatch probes every instance's /readyz directly (beside HAProxy) and keeps what came back. */
export interface ReadinessWatch {
  /** Probes answered other than 200, as "instance: status" (0: no answer within the timeout). */
  notReady(): string[];
  probes(): number;
  /** The most calls any instance's /readyz detail showed waiting for a pooled connection. */
  maxWaiting(): number;
  stop(): Promise<void>;
}

/**
 * watchReadiness sends GET /readyz to each instance every intervalMs, as
 * HAProxy's checks do, and records every answer that is not 200. An instance
 * that is down on purpose (killed) is the caller's to leave out.
 */
export function watchReadiness(urls: readonly string[], intervalMs = 250, timeoutMs = 2000): ReadinessWatch {
  const failures: string[] = [];
  let count = 0;
  let maxWaiting = 0;
  const inFlight = new Set<Promise<void>>();
  const probe = () => {
    for (const [i, url] of urls.entries()) {
      const done = fetch(`${url}/readyz`, { signal: AbortSignal.timeout(timeoutMs) })
        .then(async (res) => {
          const body = (await res.json()) as { detail?: { store?: { pool?: { waiting?: number } } } };
          maxWaiting = Math.max(maxWaiting, body.detail?.store?.pool?.waiting ?? 0);
          if (res.status !== 200) failures.push(`instance ${i + 1}: ${res.status}`);
        })
        .catch(() => void failures.push(`instance ${i + 1}: no answer within ${timeoutMs} ms`))
        .finally(() => {
          count++;
          inFlight.delete(done);
        });
      inFlight.add(done);
    }
  };
  probe();
  const timer = setInterval(probe, intervalMs);
  return {
    notReady: () => [...failures],
    probes: () => count,
    maxWaiting: () => maxWaiting,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}
