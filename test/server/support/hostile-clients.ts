import assert from "node:assert/strict";
import net from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { DroppedConnection, RefusedRequest } from "../../../src/listener/listener-events.js";
import { listen, type ListeningServer, type ListenOptions } from "../../../src/listener/listen.js";
import type { ListenLimits } from "../../../src/listener/listen-limits.js";
import type { NodeHandler } from "../../../src/http/node-http.js";

/** A listener on 127.0.0.1 with what it reported. */
export interface Listener {
  server: ListeningServer;
  port: number;
  refused: RefusedRequest[];
  dropped: DroppedConnection[];
  close(): Promise<void>;
}

/** startListener runs listen() with handler and limits, recording onRefused and onConnectionDropped. */
export async function startListener(
  handler: NodeHandler,
  limits: Partial<ListenLimits>,
  options: Pick<ListenOptions, "generateRequestId"> = {},
): Promise<Listener> {
  const refused: RefusedRequest[] = [];
  const dropped: DroppedConnection[] = [];
  const server = await listen(handler, {
    host: "127.0.0.1",
    port: 0,
    limits,
    ...options,
    onRefused: (event) => refused.push(event),
    onConnectionDropped: (event) => dropped.push(event),
  });
  return { server, port: server.port, refused, dropped, close: () => server.close({ graceMs: 100 }) };
}

/** within fails when promise does not settle within ms. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, delay(ms).then(() => assert.fail(`${what} did not happen within ${ms} ms`))]);
}

/** waitFor polls until condition holds, failing after ms. */
export async function waitFor(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) assert.fail(`${what} did not happen within ${ms} ms`);
    await delay(10);
  }
}

/** A raw TCP client: everything it received, and when the server closed it. */
export interface RawClient {
  socket: net.Socket;
  /** Resolves with the ms from connect to close. */
  closed: Promise<number>;
  isClosed(): boolean;
  received(): Buffer;
}

/** openRaw connects from localAddress (127.0.0.1 unless given) and collects what the server sends. */
export async function openRaw(port: number, localAddress = "127.0.0.1"): Promise<RawClient> {
  const socket = net.connect({ host: "127.0.0.1", port, localAddress, noDelay: true });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.on("error", () => {});
  const started = performance.now();
  let isClosed = false;
  const closed = new Promise<number>((resolve) =>
    socket.once("close", () => {
      isClosed = true;
      resolve(performance.now() - started);
    }),
  );
  return { socket, closed, isClosed: () => isClosed, received: () => Buffer.concat(chunks) };
}

/** RawAnswer is one HTTP/1.1 response read off the wire. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** parseAnswers splits what a connection received into whole HTTP/1.1 responses (content-length or chunked). */
export function parseAnswers(raw: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf("\r\n\r\n", at);
    if (end < 0) break;
    const [statusLine, ...lines] = raw.subarray(at, end).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let next = end + 4;
    const parts: Buffer[] = [];
    if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
      for (;;) {
        const lineEnd = raw.indexOf("\r\n", next);
        if (lineEnd < 0) return answers;
        const size = parseInt(raw.subarray(next, lineEnd).toString("latin1"), 16);
        if (raw.length < lineEnd + 2 + size + 2) return answers;
        parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
        next = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
    } else {
      const length = Number(headers["content-length"] ?? 0);
      if (raw.length < next + length) break;
      parts.push(raw.subarray(next, next + length));
      next += length;
    }
    answers.push({ status: Number(statusLine!.split(" ")[1]), headers, body: Buffer.concat(parts).toString("utf8") });
    at = next;
  }
  return answers;
}

/** HTTP/2 frame types and flags (RFC 9113 §6). */
export const h2 = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
} as const;

/** The client connection preface (RFC 9113 §3.4). */
export const h2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** frame builds one HTTP/2 frame. */
export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** literalHeader is an HPACK literal header field without indexing, new name (RFC 7541 §6.2.2). */
export function literalHeader(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name, "latin1"), Buffer.from([value.length]), Buffer.from(value, "latin1")]);
}

/** requestHeaderBlock is a GET of path: :method GET and :scheme http from the static table, then literals. */
export function requestHeaderBlock(path: string, extra: [string, string][] = []): Buffer {
  return Buffer.concat([
    Buffer.from([0x82, 0x86]),
    literalHeader(":path", path),
    literalHeader(":authority", "127.0.0.1"),
    ...extra.map(([name, value]) => literalHeader(name, value)),
  ]);
}

export interface ReceivedFrame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/** RawH2Client is a hand-driven HTTP/2 connection: it sends only the frames a test writes. */
export interface RawH2Client extends RawClient {
  frames(): ReceivedFrame[];
  send(...frames: Buffer[]): void;
}

/**
 * openRawH2 sends the preface and an empty SETTINGS frame. With ackPings it
 * answers the server's PINGs (and SETTINGS), as a well-behaved client does;
 * without, it answers nothing.
 */
export async function openRawH2(port: number, options: { ackPings?: boolean } = {}): Promise<RawH2Client> {
  const client = await openRaw(port);
  const frames: ReceivedFrame[] = [];
  let pending = Buffer.alloc(0);
  client.socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const received = { type: pending[3]!, flags: pending[4]!, streamId: pending.readUInt32BE(5) & 0x7fffffff, payload: pending.subarray(9, 9 + length) };
      frames.push(received);
      pending = pending.subarray(9 + length);
      if (!options.ackPings || client.socket.destroyed) continue;
      if (received.type === h2.PING && !(received.flags & h2.ACK)) client.socket.write(frame(h2.PING, h2.ACK, 0, received.payload));
      if (received.type === h2.SETTINGS && !(received.flags & h2.ACK)) client.socket.write(frame(h2.SETTINGS, h2.ACK, 0));
    }
  });
  client.socket.write(Buffer.concat([h2Preface, frame(h2.SETTINGS, 0, 0)]));
  return { ...client, frames: () => frames, send: (...out) => client.socket.write(Buffer.concat(out)) };
}

/** A handler that answers every request 200 with body. */
export function answering(body: string): NodeHandler {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(body);
  };
}
