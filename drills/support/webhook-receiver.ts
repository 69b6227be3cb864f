import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/**
 * How the receiver answers right now: "ok" 204 after delayMs, "unavailable"
 * 503 without Retry-After, "hang" never answers (a dead endpoint). Refusing
 * connections is closeListener(), not a mode: a closed port is what a
 * receiver that is down really looks like.
 */
export type ReceiverMode = "ok" | "unavailable" | "hang";

/** One event as the receiver first accepted it (answered 2xx). */
export interface AcceptedEvent {
  id: string;
  type: string;
  /** The event's own timestamp (ms since the epoch): when the change happened. */
  eventAt: number;
  /** Date.now() when its body had arrived. */
  receivedAt: number;
}

export interface VerifyingReceiver {
  /** http://127.0.0.1:<port>/hook */
  readonly url: string;
  /** The endpoint's secret, set once the endpoint is registered (deliveries before that count as invalid). */
  setSecret(secret: string): void;
  setMode(mode: ReceiverMode): void;
  /** Refuses connections (the port is closed, open connections cut) until reopen(). */
  closeListener(): Promise<void>;
  reopen(): Promise<void>;
  /** First 2xx answer per webhook-id, in arrival order. */
  readonly accepted: Map<string, AcceptedEvent>;
  counts(): ReceiverCounts;
  close(): Promise<void>;
}

export interface ReceiverCounts {
  /** Requests whose body arrived, whatever the answer. */
  requests: number;
  /** Signature and timestamp verified by the standardwebhooks package. */
  verified: number;
  invalid: number;
  /** Requests answered 2xx. */
  acknowledged: number;
  /** Requests answered 2xx for a webhook-id already answered 2xx before. */
  duplicates: number;
  /** Requests that arrived while another with the same webhook-id was still being answered. */
  concurrentSameId: number;
  /** Most requests in flight at once (this receiver is one endpoint). */
  maxInFlight: number;
}

/**
 * startVerifyingReceiver listens on 127.0.0.1 (port 0, or the port given, to
 * come back where it was) and verifies every delivery with the
 * `standardwebhooks` package over the raw body, as the README tells
 * integrators to, counting what a receiver would care about: invalid
 * signatures, duplicates by webhook-id, and the same id in flight twice.
 */
export async function startVerifyingReceiver(options: { delayMs?: number } = {}): Promise<VerifyingReceiver> {
  let webhook: Webhook | undefined;
  let mode: ReceiverMode = "ok";
  const accepted = new Map<string, AcceptedEvent>();
  const inFlightById = new Map<string, number>();
  const hanging = new Set<import("node:http").ServerResponse>();
  const counts: ReceiverCounts = { requests: 0, verified: 0, invalid: 0, acknowledged: 0, duplicates: 0, concurrentSameId: 0, maxInFlight: 0 };
  let inFlight = 0;

  const handler = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    const id = String(req.headers["webhook-id"] ?? "");
    inFlight += 1;
    counts.maxInFlight = Math.max(counts.maxInFlight, inFlight);
    const sameNow = inFlightById.get(id) ?? 0;
    if (sameNow > 0) counts.concurrentSameId += 1;
    inFlightById.set(id, sameNow + 1);
    res.on("close", () => {
      inFlight -= 1;
      const left = (inFlightById.get(id) ?? 1) - 1;
      if (left <= 0) inFlightById.delete(id);
      else inFlightById.set(id, left);
      hanging.delete(res);
    });
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const receivedAt = Date.now();
      counts.requests += 1;
      let event: { id?: string; type?: string; timestamp?: string } | undefined;
      try {
        if (!webhook) throw new Error("no secret yet");
        event = webhook.verify(Buffer.concat(chunks).toString("utf8"), req.headers as Record<string, string>) as typeof event;
        counts.verified += 1;
      } catch {
        counts.invalid += 1;
        res.writeHead(400).end();
        return;
      }
      if (mode === "hang") {
        hanging.add(res);
        return;
      }
      if (mode === "unavailable") {
        res.writeHead(503).end();
        return;
      }
      const answer = () => {
        counts.acknowledged += 1;
        if (accepted.has(id)) counts.duplicates += 1;
        else accepted.set(id, { id, type: event?.type ?? "", eventAt: Date.parse(event?.timestamp ?? ""), receivedAt });
        res.writeHead(204).end();
      };
      if (options.delayMs) setTimeout(answer, options.delayMs);
      else answer();
    });
  };

  let server: Server = createServer(handler);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const shut = (s: Server) => {
    for (const res of hanging) res.destroy();
    s.closeAllConnections();
    return new Promise<void>((resolve) => s.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    setSecret(secret) {
      webhook = new Webhook(secret);
    },
    setMode(next) {
      mode = next;
    },
    closeListener: () => shut(server),
    async reopen() {
      server = createServer(handler);
      server.keepAliveTimeout = 30_000;
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", resolve);
      });
    },
    accepted,
    counts: () => ({ ...counts }),
    close: () => shut(server),
  };
}

/** percentileOf a list of numbers (nearest rank); NaN for none. */
export function percentileOf(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
