import { connect } from "node:net";

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
 * HAProxy's checks do (with a PROXY v1 header first, as check-send-proxy
 * does: the instances trust 127.0.0.1 as their balancer and close a
 * connection from it that has none), and records every answer that is not
 * 200. An instance that is down on purpose (killed) is the caller's to leave out.
 */
export function watchReadiness(urls: readonly string[], intervalMs = 250, timeoutMs = 2000): ReadinessWatch {
  const failures: string[] = [];
  let count = 0;
  let maxWaiting = 0;
  const inFlight = new Set<Promise<void>>();
  const probe = () => {
    for (const [i, url] of urls.entries()) {
      const done = readyzThroughProxyHeader(url, timeoutMs)
        .then(({ status, body }) => {
          const parsed = JSON.parse(body) as { detail?: { store?: { pool?: { waiting?: number } } } };
          maxWaiting = Math.max(maxWaiting, parsed.detail?.store?.pool?.waiting ?? 0);
          if (status !== 200) failures.push(`instance ${i + 1}: ${status}`);
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

/** One GET /readyz on its own connection, after a PROXY v1 header naming 127.0.0.1 as the client. */
function readyzThroughProxyHeader(url: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error("timeout")));
    socket.on("connect", () => {
      socket.write(`PROXY TCP4 127.0.0.1 ${hostname} ${socket.localPort} ${port}\r\nGET /readyz HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`);
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const at = text.indexOf("\r\n\r\n");
      if (status === 0 || at < 0) return reject(new Error("no HTTP answer"));
      resolve({ status, body: text.slice(at + 4) });
    });
  });
}
