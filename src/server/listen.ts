import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { NodeHandler } from "./node-http.js";

/** The client connection preface every prior-knowledge HTTP/2 connection opens with (RFC 9113 §3.4). */
const http2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export interface ListenOptions {
  host: string;
  /** 0 picks a free port: what tests use. */
  port: number;
}

/** ListeningServer is a bound server; close() ends every connection and resolves when the port is free. */
export interface ListeningServer {
  readonly host: string;
  readonly port: number;
  /** http://host:port of the bound address. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * listen serves handler for HTTP/1.1 and cleartext HTTP/2 on one port. Node's
 * cleartext HTTP/2 server cannot fall back to HTTP/1.1, so each connection is
 * routed by its first bytes: the HTTP/2 preface goes to the http2 server
 * (gRPC, Connect and REST over h2c), anything else to the HTTP/1.1 server
 * (REST, Connect, gRPC-Web). The bytes read to decide are put back before the
 * chosen server takes the socket.
 */
export async function listen(handler: NodeHandler, options: ListenOptions): Promise<ListeningServer> {
  const http1Server = http.createServer(handler);
  const http2Server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  http2Server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  // The HTTP/1.1 server never listens itself, so it cannot track its idle
  // connections: count requests in flight per socket here instead.
  const inFlight = new Map<net.Socket, number>();
  let closing = false;
  http1Server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.on("close", () => {
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (closing && left === 0) socket.destroySoon();
    });
  });

  const sockets = new Set<net.Socket>();
  const http2Sockets = new WeakSet<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      inFlight.delete(socket);
    });
    routeByPreface(socket, (isHttp2) => {
      if (isHttp2) http2Sockets.add(socket);
      (isHttp2 ? http2Server : http1Server).emit("connection", socket);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    host: address.address,
    port: address.port,
    url: `http://${host}:${address.port}`,
    async close() {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle connections go now; busy ones when their response is done.
      for (const session of sessions) session.close();
      for (const socket of sockets) if (!http2Sockets.has(socket) && !inFlight.get(socket)) socket.destroy();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/**
 * routeByPreface reads until the first bytes either diverge from the HTTP/2
 * preface or complete it, then hands the socket on with those bytes unread.
 */
function routeByPreface(socket: net.Socket, decide: (isHttp2: boolean) => void): void {
  let seen = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const compared = Math.min(seen.length, http2Preface.length);
    const isHttp2 = seen.subarray(0, compared).equals(http2Preface.subarray(0, compared));
    if (isHttp2 && seen.length < http2Preface.length) return;
    socket.off("data", onData);
    socket.pause();
    socket.unshift(seen);
    decide(isHttp2);
    // The HTTP/1.1 server reads through 'data' events and needs the stream
    // flowing; the http2 session drains the put-back bytes itself and must not
    // have them emitted to nobody.
    if (!isHttp2) socket.resume();
  };
  socket.on("data", onData);
  socket.on("error", () => socket.destroy());
}
