/**
 * The attacker of drills/hostile-connections.ts, run as its own process
 * (fork with tsx) so that thousands of hostile sockets do not slow the drill
 * process, which reads the server's standard error (the server's log writes
 * are synchronous, and a slow reader would stall the server), probes
 * /healthz and samples the server. It opens what the parent asks for, counts
 * what the server refused, and closes its sockets when told.
 */
import net from "node:net";
import { frame, h2, h2Preface, requestHeaderBlock } from "../../test/server/support/hostile-clients.js";

/** The attacks, by name. */
export const attackNames = ["slow-header-blocks", "idle-ignoring-goaway", "unread-pipelined", "zero-window", "flood"] as const;
export type AttackName = (typeof attackNames)[number];

export type AttackerRequest =
  | { id: number; op: "open"; attack: AttackName; url: string; connections: number; pipelined: number }
  | { id: number; op: "refused"; withinMs: number }
  | { id: number; op: "close" };

export interface AttackerReply {
  id: number;
  opened?: number;
  refused?: number;
}

/** Clients come from 127.0.0.10 and up, so the health probe's 127.0.0.1 is never one of them. */
const attackerAddress = (i: number) => `127.0.0.${10 + (i % 8)}`;

interface Opened {
  socket: net.Socket;
  connectedAt: number;
  closedAt?: number;
}

/** connectFrom opens a TCP connection from localAddress; errors are the server's doing and are ignored. */
function connectFrom(url: string, localAddress: string): Promise<Opened> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port), localAddress, noDelay: true });
    const opened: Opened = { socket, connectedAt: performance.now() };
    socket.on("error", () => {});
    socket.once("close", () => {
      opened.closedAt = performance.now();
      resolve(opened);
    });
    socket.once("connect", () => {
      opened.connectedAt = performance.now();
      resolve(opened);
    });
  });
}

/** ackServerFrames answers the server's SETTINGS and PINGs, as a well-behaved HTTP/2 client does. */
function ackServerFrames(socket: net.Socket): void {
  let pending: Buffer = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const [type, flags] = [pending[3]!, pending[4]!];
      if (!socket.destroyed && !(flags & h2.ACK)) {
        if (type === h2.PING) socket.write(frame(h2.PING, h2.ACK, 0, pending.subarray(9, 9 + length)));
        if (type === h2.SETTINGS) socket.write(frame(h2.SETTINGS, h2.ACK, 0));
      }
      pending = pending.subarray(9 + length);
    }
  });
}

/** What each attack does on one open connection. */
const behaviours: Record<Exclude<AttackName, "flood">, (socket: net.Socket, pipelined: number) => void> = {
  "slow-header-blocks": (socket) =>
    socket.write(Buffer.concat([h2Preface, frame(h2.SETTINGS, 0, 0), frame(h2.HEADERS, h2.END_STREAM, 1, requestHeaderBlock("/healthz"))])),
  "idle-ignoring-goaway": (socket) => {
    ackServerFrames(socket);
    socket.write(
      Buffer.concat([h2Preface, frame(h2.SETTINGS, 0, 0), frame(h2.HEADERS, h2.END_STREAM | h2.END_HEADERS, 1, requestHeaderBlock("/healthz"))]),
    );
    const pings = setInterval(() => {
      if (socket.destroyed) clearInterval(pings);
      else socket.write(frame(h2.PING, 0, 0, Buffer.alloc(8)));
    }, 250);
    socket.once("close", () => clearInterval(pings));
  },
  "unread-pipelined": (socket, pipelined) => {
    socket.pause();
    socket.write("GET /v1/openapi.json HTTP/1.1\r\nHost: drill\r\n\r\n".repeat(pipelined));
  },
  "zero-window": (socket) => {
    ackServerFrames(socket);
    // SETTINGS_INITIAL_WINDOW_SIZE (0x4) = 0, then 100 concurrent requests.
    const zeroWindow = Buffer.alloc(6);
    zeroWindow.writeUInt16BE(0x4, 0);
    const requests = Array.from({ length: 100 }, (_, k) =>
      frame(h2.HEADERS, h2.END_STREAM | h2.END_HEADERS, 2 * k + 1, requestHeaderBlock("/v1/openapi.json")),
    );
    socket.write(Buffer.concat([h2Preface, frame(h2.SETTINGS, 0, 0, zeroWindow), ...requests]));
  },
};

let open: Opened[] = [];

async function openAttack(request: Extract<AttackerRequest, { op: "open" }>): Promise<number> {
  if (request.attack === "flood") {
    // Silent connections, in waves of 250 so the kernel's accept queue (511) does not drop SYNs.
    for (let wave = 0; wave < request.connections; wave += 250) {
      const count = Math.min(250, request.connections - wave);
      const batch = await Promise.all(Array.from({ length: count }, (_, i) => connectFrom(request.url, attackerAddress(wave + i))));
      for (const opened of batch) opened.socket.resume();
      open.push(...batch);
    }
    return open.length;
  }
  const behave = behaviours[request.attack];
  const batch = await Promise.all(Array.from({ length: request.connections }, (_, i) => connectFrom(request.url, attackerAddress(i))));
  for (const opened of batch) if (!opened.socket.destroyed) behave(opened.socket, request.pipelined);
  open.push(...batch);
  return batch.length;
}

process.on("message", (message: AttackerRequest) => {
  void (async () => {
    const reply: AttackerReply = { id: message.id };
    if (message.op === "open") reply.opened = await openAttack(message);
    if (message.op === "refused") {
      // Closed by the server at once, unserved: the caps. Silent connections let in last the headers timeout.
      reply.refused = open.filter((o) => o.closedAt !== undefined && o.closedAt - o.connectedAt < message.withinMs).length;
    }
    if (message.op === "close") {
      for (const opened of open) opened.socket.destroy();
      open = [];
    }
    process.send!(reply);
  })();
});
