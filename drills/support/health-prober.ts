import http from "node:http";

/** HealthProbe is one GET /healthz: when it started, how long it took, and whether it was answered 200. */
export interface HealthProbe {
  at: number;
  ms: number;
  ok: boolean;
  /** The status, or the error's code when there was no answer. */
  outcome: string;
}

/** HealthProber probes on a timer and keeps every result. */
export interface HealthProber {
  probes: HealthProbe[];
  between(from: number, to: number): HealthProbe[];
  /** Stops probing and waits for the probes in flight. */
  stop(): Promise<void>;
}

/**
 * startHealthProber sends GET /healthz every intervalMs, each on a new
 * connection from 127.0.0.1 (what a local health check does), so every probe
 * must get past the connection caps. A probe not answered 200 within
 * timeoutMs fails.
 */
export function startHealthProber(url: string, intervalMs: number, timeoutMs = 2000): HealthProber {
  const probes: HealthProbe[] = [];
  const inFlight = new Set<Promise<void>>();
  const probe = () => {
    const at = performance.now();
    const done = new Promise<void>((resolve) => {
      const finish = (ok: boolean, outcome: string) => {
        probes.push({ at, ms: performance.now() - at, ok, outcome });
        resolve();
      };
      const req = http.get(`${url}/healthz`, { agent: false, localAddress: "127.0.0.1", timeout: timeoutMs }, (res) => {
        res.resume();
        res.on("end", () => finish(res.statusCode === 200, String(res.statusCode)));
        res.on("error", (error: NodeJS.ErrnoException) => finish(false, error.code ?? "error"));
      });
      req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
      req.on("error", (error: NodeJS.ErrnoException) => finish(false, error.code ?? "error"));
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };
  probe();
  const timer = setInterval(probe, intervalMs);
  return {
    probes,
    between: (from, to) => probes.filter((p) => p.at >= from && p.at <= to),
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}
