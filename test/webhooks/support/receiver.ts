import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** ReceivedRequest is one request a test receiver got, body read raw (as a verifier needs it). */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the body had arrived. */
  at: number;
}

/** Answer: what the receiver replies; "hang" never answers (a dead endpoint). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | "hang";

export interface Receiver {
  /** http://127.0.0.1:<port>/hook */
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedRequest[];
  /** Requests being answered right now, and the most there ever were at once. */
  open(): number;
  maxOpen(): number;
  /** Resolves with the count-th request (1-based) once it has arrived. */
  nth(count: number, timeoutMs?: number): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

/** startReceiver listens on 127.0.0.1 and answers each request as answer says (index counts from 0). */
export async function startReceiver(answer: (request: ReceivedRequest, index: number) => Answer = () => ({ status: 200 })): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const waiters: (() => void)[] = [];
  let open = 0;
  let maxOpen = 0;
  const server: Server = createServer((req, res) => {
    open += 1;
    maxOpen = Math.max(maxOpen, open);
    res.on("close", () => (open -= 1));
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: performance.now(),
      };
      const index = received.push(request) - 1;
      for (const wake of waiters.splice(0)) wake();
      const reply = answer(request, index);
      if (reply === "hang") return;
      setTimeout(() => {
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body ?? "");
      }, reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    open: () => open,
    maxOpen: () => maxOpen,
    async nth(count, timeoutMs = 5000) {
      const deadline = performance.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`expected ${count} requests, got ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received[count - 1]!;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** waitUntil polls check every 5 ms until it is true or timeoutMs passes (then throws with what). */
export async function waitUntil(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * createReceivers starts receivers as a suite needs them and closes them
 * together (closeAll, from afterEach or after), so no suite keeps its own list.
 */
export function createReceivers() {
  const open: Receiver[] = [];
  return {
    async start(answer?: (request: ReceivedRequest, index: number) => Answer): Promise<Receiver> {
      const r = await startReceiver(answer);
      open.push(r);
      return r;
    },
    async closeAll(): Promise<void> {
      await Promise.all(open.splice(0).map((r) => r.close()));
    },
  };
}
