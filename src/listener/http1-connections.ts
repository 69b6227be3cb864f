import http from "node:http";
import type net from "node:net";
import type { ConnectionSweep } from "./connection-sweep.js";
import { answerRequest, writeRawAnswer } from "./listener-answers.js";
import type { ListenerEvents } from "./listener-events.js";
import type { ListenLimits } from "./listen-limits.js";
import type { NodeHandler } from "../http/node-http.js";
import { createWriteWatch, flushedBytes, type WriteWatch } from "./write-progress.js";

export interface Http1ConnectionsOptions {
  handler: NodeHandler;
  limits: ListenLimits;
  events: ListenerEvents;
  /** The request id for an answer: the client's X-Request-Id header when sane, else a new one. */
  requestId(header: string | string[] | undefined): string;
  sweep: ConnectionSweep;
  now(): number;
}

/** Http1Connections is the HTTP/1.1 half of the one-port listener. */
export interface Http1Connections {
  /** take hands a routed socket to the HTTP/1.1 server. */
  take(socket: net.Socket): void;
  /**
   * beginClose marks every response not yet started `Connection: close`,
   * closes each connection when its last response is done, and closes idle
   * connections now.
   */
  beginClose(): void;
  /** close stops the server's timeout bookkeeping. */
  close(): void;
}

/** What the listener keeps per HTTP/1.1 connection. */
interface Connection {
  socket: net.Socket;
  /** Requests whose response is not yet flushed to the kernel (or abandoned). */
  inFlight: number;
  responses: Set<http.ServerResponse>;
  /** When the connection opened or its last response ended: where a parser error's duration starts. */
  idleSince: number;
  /** Set once the listener answered with `Connection: close`: later requests on it are never handled. */
  refusing: boolean;
  writes: WriteWatch;
  stopWatching(): void;
}

/**
 * createHttp1Connections serves HTTP/1.1 through Node's http server, with
 * what Node leaves open closed:
 * - at most maxPipelinedRequests requests wait for their responses per
 *   connection, and at most maxUnsentBytes of response data: the next request
 *   is answered 429 with `Connection: close`, the socket is no longer read
 *   (TCP pushes back on the client), and requests already read behind it are
 *   never handled;
 * - a connection owing response bytes with no write progress for
 *   writeTimeoutMs is destroyed;
 * - every answer Node would write itself (parser errors 400/408/431, a
 *   missing Host 400, an Expect other than 100-continue 417, CONNECT) carries
 *   the JSON error body, X-Request-Id and `Cache-Control: no-store`, and is
 *   reported through onRefused.
 */
export function createHttp1Connections(options: Http1ConnectionsOptions): Http1Connections {
  const { limits, events } = options;
  const server = http.createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.idleTimeoutMs,
    // How often Node looks for expired requests: the timeouts' precision.
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    // Answered below, in the service's error shape.
    requireHostHeader: false,
  });
  // Node enforces headersTimeout and requestTimeout through a connection list
  // it sets up when the server emits 'listening'. This server never listens
  // (its sockets come from the router), so start that bookkeeping here;
  // test/server/limits.test.ts fails if a Node release stops honouring it.
  server.emit("listening");

  const connections = new Map<net.Socket, Connection>();
  let closing = false;

  /** refuse answers a request itself and ends the connection after it. */
  function refuse(connection: Connection, req: http.IncomingMessage, res: http.ServerResponse, status: number, message: string, reason: string) {
    const requestId = options.requestId(req.headers["x-request-id"]);
    connection.refusing = true;
    stopReading(connection.socket);
    answerRequest(res, status, message, requestId);
    events.onRefused?.({ protocol: "http1", status, reason, requestId });
  }

  /** admit counts a parsed request on its connection and says whether the handler may have it. */
  function admit(req: http.IncomingMessage, res: http.ServerResponse): Connection | undefined {
    const connection = connections.get(req.socket as net.Socket);
    if (!connection) return undefined;
    connection.inFlight++;
    connection.responses.add(res);
    // While closing, tell the client not to send another request on this connection.
    if (closing) res.shouldKeepAlive = false;
    res.once("close", () => {
      connection.inFlight--;
      connection.responses.delete(res);
      connection.idleSince = options.now();
      if (closing && connection.inFlight === 0) connection.socket.destroySoon();
    });
    if (connection.refusing) return undefined;
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is answered 400 (Node would, without the body).
    if (req.httpVersion === "1.1" && req.headers.host === undefined) {
      refuse(connection, req, res, 400, "the Host header is required", "missing Host header");
      return undefined;
    }
    if (connection.inFlight > limits.maxPipelinedRequests) {
      refuse(
        connection,
        req,
        res,
        429,
        `too many pipelined requests: at most ${limits.maxPipelinedRequests} may wait for their responses on one connection`,
        "too many pipelined requests",
      );
      return undefined;
    }
    if (connection.socket.writableLength >= limits.maxUnsentBytes) {
      refuse(connection, req, res, 429, "too many unread responses on this connection: read them before sending more requests", "responses not read");
      return undefined;
    }
    return connection;
  }

  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (admit(req, res)) options.handler(req, res);
  });
  // Expect: 100-continue is Node's to answer; anything else is 417 (RFC 9110 §10.1.1).
  server.on("checkExpectation", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const connection = admit(req, res);
    if (connection) refuse(connection, req, res, 417, "only Expect: 100-continue is supported", "unsupported Expect");
  });
  // This server is nobody's proxy. Node hands the socket over for CONNECT, no longer parsing it.
  server.on("connect", (req: http.IncomingMessage, socket: net.Socket) => {
    const requestId = options.requestId(req.headers["x-request-id"]);
    writeRawAnswer(socket, 501, "CONNECT is not supported: this server is not a proxy", requestId);
    events.onRefused?.({ protocol: "http1", status: 501, reason: "CONNECT", requestId });
  });
  // Requests Node's parser refuses (unknown method, malformed target or
  // header, headers or body too slow, headers too large) never reach the
  // handler: answer them in the service's error shape.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: net.Socket) => {
    const connection = connections.get(socket);
    const answer = clientErrorAnswer(error);
    const started = connection && [...connection.responses].some((res) => res.headersSent);
    if (!answer || started || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = options.requestId(undefined);
    writeRawAnswer(socket, answer.status, answer.message, requestId);
    events.onRefused?.({
      protocol: "http1",
      status: answer.status,
      reason: error.code ?? "malformed request",
      requestId,
      durationMs: connection ? Math.round(options.now() - connection.idleSince) : undefined,
    });
  });

  function watch(connection: Connection, now: number) {
    const { socket } = connection;
    if (socket.destroyed) return;
    if (connection.writes.check(now, socket.writableLength, flushedBytes(socket))) {
      socket.destroy();
      events.onConnectionDropped?.({ reason: "write-timeout", protocol: "http1" });
    }
  }

  return {
    take(socket) {
      const now = options.now();
      const connection: Connection = {
        socket,
        inFlight: 0,
        responses: new Set(),
        idleSince: now,
        refusing: false,
        writes: createWriteWatch(limits.writeTimeoutMs, now),
        stopWatching: () => {},
      };
      connection.stopWatching = options.sweep.add((at) => watch(connection, at));
      connections.set(socket, connection);
      socket.once("close", () => {
        connections.delete(socket);
        connection.stopWatching();
      });
      server.emit("connection", socket);
      stopParsingOnceRefusing(socket, connection);
    },
    beginClose() {
      closing = true;
      for (const connection of connections.values()) {
        for (const res of connection.responses) if (!res.headersSent) res.shouldKeepAlive = false;
        if (connection.inFlight === 0) connection.socket.destroy();
      }
    },
    close() {
      server.close();
    },
  };
}

/**
 * clientErrorAnswer is the status Node itself sends for a parser error (431
 * for oversized headers, 408 for a request timeout, 400 otherwise), with a
 * message; undefined for socket errors (a reset), which get no answer.
 */
function clientErrorAnswer(error: NodeJS.ErrnoException): { status: number; message: string } | undefined {
  if (error.code === "HPE_HEADER_OVERFLOW") return { status: 431, message: "request headers are too large" };
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, message: "the request did not arrive in time" };
  if (error.code?.startsWith("HPE_")) return { status: 400, message: "malformed HTTP request" };
  return undefined;
}

/** Node's HTTP parser as far as stopParsingOnceRefusing touches it. */
interface NodeHttpParser {
  onIncoming?: ((this: unknown, ...args: unknown[]) => unknown) | null;
}

/**
 * stopParsingOnceRefusing makes Node's parser stop at the first request
 * after the connection started refusing. Node parses a whole read (64 KiB:
 * thousands of small pipelined requests) before anything can pause it, and
 * makes a request and a response object for each, megabytes per connection
 * for requests that will never be answered. The parser asks onIncoming what
 * to do after each request's headers; answering 2 ("upgrade") makes llhttp
 * stop there, and as the socket is no longer read, nothing is parsed again.
 * Should a Node release change that hook, requests are still refused, only
 * no longer cheaply; test/server/hostile-connections.test.ts counts them.
 */
function stopParsingOnceRefusing(socket: net.Socket, connection: Connection): void {
  const parser = (socket as unknown as { parser?: NodeHttpParser | null }).parser;
  const onIncoming = parser?.onIncoming;
  if (!parser || typeof onIncoming !== "function") return;
  parser.onIncoming = function (this: unknown, ...args: unknown[]) {
    return connection.refusing ? 2 : onIncoming.apply(this, args);
  };
}

/**
 * stopReading stops reading the socket for good: what the client sends next
 * stays in the kernel, and TCP flow control stops the client. Pausing the
 * socket is not enough, because Node's HTTP parser reads the libuv handle
 * directly; stopping the handle is what Node's own net code does.
 */
function stopReading(socket: net.Socket): void {
  const handle = (socket as unknown as { _handle?: { readStop?(): number } | null })._handle;
  handle?.readStop?.();
}
