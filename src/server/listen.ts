import http, { STATUS_CODES } from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { errorBody } from "../transport/http-status.js";
import type { NodeHandler } from "./node-http.js";

/** The client connection preface every prior-knowledge HTTP/2 connection opens with (RFC 9113 §3.4). */
const http2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export interface ListenOptions {
  host: string;
  /** 0 picks a free port: what tests use. */
  port: number;
  /** Limits against slow and greedy clients; each defaults to defaultListenLimits. */
  limits?: Partial<ListenLimits>;
}

/** ListenLimits bound what one client can hold on to (README, Health and operations). */
export interface ListenLimits {
  /**
   * Longest from a connection's first byte (or, on keep-alive, a request's
   * first byte) until its request headers are complete. Also how long a new
   * connection may stay silent before it is closed.
   */
  headersTimeoutMs: number;
  /** Longest until a whole request, body included, has arrived (HTTP/1.1 and per HTTP/2 stream). */
  requestTimeoutMs: number;
  /** Longest a connection may sit without requests: HTTP/1.1 keep-alive and HTTP/2 sessions. */
  idleTimeoutMs: number;
  /** Concurrent streams one HTTP/2 connection may open (SETTINGS_MAX_CONCURRENT_STREAMS, RFC 9113 §6.5.2). */
  maxConcurrentStreams: number;
}

/**
 * The defaults: generous for a JSON API with 64 KiB bodies, short enough that
 * slow clients cannot pile up. The idle timeout outlasts the 60 s idle timeout
 * common in load balancers, so the balancer, not the service, closes an idle
 * pooled connection (the other way round races a request against the close).
 */
export const defaultListenLimits: ListenLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 65_000,
  maxConcurrentStreams: 100,
};

/** ListeningServer is a bound server; close() ends every connection and resolves when the port is free. */
export interface ListeningServer {
  readonly host: string;
  readonly port: number;
  /** http://host:port of the bound address. */
  readonly url: string;
  /**
   * Stops accepting connections, sends HTTP/2 sessions GOAWAY, closes idle
   * connections, lets requests in flight finish for up to graceMs (default
   * 2000), then ends whatever is left.
   */
  close(options?: { graceMs?: number }): Promise<void>;
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
  const limits = { ...defaultListenLimits, ...options.limits };
  const http1Server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.idleTimeoutMs,
      // How often Node looks for expired requests: the timeouts' precision.
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    handler,
  );
  // Node enforces headersTimeout and requestTimeout through a connection list
  // it sets up when the server emits 'listening'. This server never listens
  // (its sockets come from the router below), so start that bookkeeping here;
  // test/server/limits.test.ts fails if a Node release stops honouring it.
  http1Server.emit("listening");
  const http2Server = http2.createServer({ settings: { maxConcurrentStreams: limits.maxConcurrentStreams } }, handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  http2Server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    if (closing) session.close();
    closeWhenIdle(session, limits.idleTimeoutMs);
  });
  http2Server.on("stream", (stream: http2.ServerHttp2Stream, _headers: http2.IncomingHttpHeaders, flags: number) => {
    limitRequestTime(stream, flags, limits.requestTimeoutMs);
  });

  // The HTTP/1.1 server never listens itself, so it cannot track its idle
  // connections: count requests in flight per socket here instead.
  const inFlight = new Map<net.Socket, number>();
  const responses = new Set<http.ServerResponse>();
  let closing = false;
  http1Server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    responses.add(res);
    // While closing, tell the client not to send another request on this connection.
    if (closing) res.shouldKeepAlive = false;
    res.on("close", () => {
      responses.delete(res);
      const left = (inFlight.get(socket) ?? 1) - 1;
      inFlight.set(socket, left);
      if (closing && left === 0) socket.destroySoon();
    });
  });
  // Requests Node's parser refuses (unknown method, malformed target or
  // header) never reach the handler: answer them in the service's error shape.
  http1Server.on("clientError", (error: NodeJS.ErrnoException, socket: net.Socket) => {
    const answering = [...responses].some((res) => res.socket === socket && res.headersSent);
    answerClientError(error, socket, !answering);
  });

  const sockets = new Set<net.Socket>();
  const http2Sockets = new WeakSet<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      inFlight.delete(socket);
    });
    routeByPreface(socket, limits.headersTimeoutMs, (isHttp2) => {
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
    async close({ graceMs = 2000 } = {}) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle connections go now; busy ones when their response is done.
      // session.close() sends GOAWAY and lets the session's open streams finish.
      for (const session of sessions) session.close();
      for (const res of responses) if (!res.headersSent) res.shouldKeepAlive = false;
      for (const socket of sockets) if (!http2Sockets.has(socket) && !inFlight.get(socket)) socket.destroy();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      for (const socket of sockets) socket.destroy();
      await closed;
      // Stops the timeout bookkeeping started by the 'listening' above.
      http1Server.close();
    },
  };
}

/**
 * routeByPreface reads until the first bytes either diverge from the HTTP/2
 * preface or complete it, then hands the socket on with those bytes unread.
 */
function routeByPreface(socket: net.Socket, timeoutMs: number, decide: (isHttp2: boolean) => void): void {
  let seen = Buffer.alloc(0);
  // A connection that sends nothing (or too little to decide) is never handed
  // to either server, so neither server's timeouts can reach it.
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  socket.once("close", () => clearTimeout(timer));
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const compared = Math.min(seen.length, http2Preface.length);
    const isHttp2 = seen.subarray(0, compared).equals(http2Preface.subarray(0, compared));
    if (isHttp2 && seen.length < http2Preface.length) return;
    socket.off("data", onData);
    clearTimeout(timer);
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

/**
 * closeWhenIdle closes an HTTP/2 session (GOAWAY) after idleMs without frames
 * and without open streams. A stream that is merely slow (a handler waiting
 * on the database) keeps its session; limitRequestTime bounds the stream.
 */
function closeWhenIdle(session: http2.ServerHttp2Session, idleMs: number): void {
  let open = 0;
  session.on("stream", (stream: http2.ServerHttp2Stream) => {
    open++;
    stream.once("close", () => open--);
  });
  session.on("timeout", () => {
    if (open === 0) session.close();
    // The timer fires once: arm it again to look after the streams finish.
    else session.setTimeout(idleMs);
  });
  session.setTimeout(idleMs);
}

/**
 * limitRequestTime cancels an HTTP/2 stream (RST_STREAM CANCEL) whose request
 * has not fully arrived within timeoutMs: the HTTP/2 side of the HTTP/1.1
 * server's requestTimeout. A request that ended with its headers has no body
 * to wait for.
 */
function limitRequestTime(stream: http2.ServerHttp2Stream, flags: number, timeoutMs: number): void {
  if (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) return;
  const timer = setTimeout(() => {
    if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
  }, timeoutMs);
  timer.unref();
  const done = () => clearTimeout(timer);
  stream.once("end", done);
  stream.once("close", done);
}

/**
 * answerClientError replaces Node's default answer to a request its parser
 * refuses: the same status Node sends (431 for oversized headers, 408 for a
 * request timeout, 400 otherwise), with the {status, title, message} body
 * every other error has. Nothing is written when a response has started.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: net.Socket, canAnswer: boolean): void {
  if (canAnswer && socket.writable) {
    const [status, message]: [number, string] =
      error.code === "HPE_HEADER_OVERFLOW"
        ? [431, "request headers are too large"]
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "the request did not arrive in time"]
          : [400, "malformed HTTP request"];
    const body = JSON.stringify(errorBody(status, message));
    // Close gracefully: destroying a socket with unread bytes (the rest of a
    // body) resets the connection, and the client may lose the answer. Read
    // and drop what still comes for up to a second after the answer.
    socket.removeAllListeners("data");
    socket.on("data", () => {});
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
    );
    socket.resume();
    setTimeout(() => socket.destroy(), 1000).unref();
    return;
  }
  socket.destroy(error);
}
