import http2 from "node:http2";
import type net from "node:net";
import type { Http1ConnectionsOptions } from "./http1-connections.js";
import { answerRequest } from "./listener-answers.js";
import type { DropReason } from "./listener-events.js";
import { createWriteWatch, flushedBytes, unsentBytes, type WriteWatch } from "./write-progress.js";

const {
  NGHTTP2_NO_ERROR,
  NGHTTP2_CANCEL,
  NGHTTP2_REFUSED_STREAM,
  NGHTTP2_FLAG_END_STREAM,
} = http2.constants;

/** Bytes of the acknowledgement frames a session writes for the client (RFC 9113 §6.5.3, §6.7). */
const settingsAckBytes = 9;
const pingAckBytes = 17;

/** What the HTTP/2 half is given: the same as the HTTP/1.1 half. */
export type Http2SessionsOptions = Http1ConnectionsOptions;

/** Http2Sessions is the cleartext HTTP/2 half of the one-port listener. */
export interface Http2Sessions {
  /** take hands a routed socket (the preface still unread) to the http2 server. */
  take(socket: net.Socket): void;
  /** beginClose sends every session GOAWAY and lets its open streams finish. */
  beginClose(): void;
}

/** What the listener keeps per HTTP/2 session. */
interface Session {
  session: http2.ServerHttp2Session;
  socket: net.Socket;
  streams: Set<http2.ServerHttp2Stream>;
  /** The highest stream id the session has handed to JavaScript. */
  lastStreamId: number;
  /** When the last stream closed (or the session opened). */
  idleSince: number;
  goawaySent: boolean;
  /** A stream whose header block nghttp2 began but never finished, and since when. */
  openHeaderBlock?: { streamId: number; since: number };
  /** A stream id nghttp2 processed but reset itself (the client answered a PING after it). */
  settledStreamId: number;
  /** Bytes of SETTINGS and PING acknowledgements written: output the client asked for, not progress. */
  ackBytes: number;
  writes: WriteWatch;
  /** Set when the listener cut the session: its streams' resets are not the client's doing. */
  cut: boolean;
}

/**
 * createHttp2Sessions serves cleartext HTTP/2 through Node's http2 server,
 * with what it leaves open closed:
 * - a header block (HEADERS without END_HEADERS) unfinished after
 *   headersTimeoutMs destroys the connection, as HTTP/1.1's headers timeout
 *   does; nghttp2 keeps such a stream to itself, so it is found by comparing
 *   the last stream id nghttp2 processed with the last one JavaScript saw;
 * - a session without open streams for idleTimeoutMs gets GOAWAY, and is
 *   destroyed goawayGraceMs later if it is still open (a client that ignores
 *   GOAWAY, or sits in a header block, keeps the socket otherwise);
 * - a session owing response bytes with no write progress for writeTimeoutMs
 *   is destroyed (a client that never opens its flow-control window);
 * - a new stream on a session with maxUnsentBytes or more unsent is refused
 *   (REFUSED_STREAM, which clients may retry);
 * - CONNECT is answered 501, a stream whose request does not arrive within
 *   requestTimeoutMs is reset (CANCEL), and streams reset for a protocol
 *   error are reported with the status the client got.
 */
export function createHttp2Sessions(options: Http2SessionsOptions): Http2Sessions {
  const { limits, events } = options;
  const server = http2.createServer({
    settings: { maxConcurrentStreams: limits.maxConcurrentStreams },
    // Node's own credit limit (header tables, frames queued for the socket,
    // unacknowledged PINGs and SETTINGS): a backstop behind maxUnsentBytes,
    // which bounds the response data waiting for the client's window.
    maxSessionMemory: Math.max(4, Math.ceil((8 * limits.maxUnsentBytes) / 2 ** 20)),
  });
  const sessions = new Map<http2.ServerHttp2Session, Session>();
  let closing = false;
  let arriving: net.Socket | undefined;

  function drop(watched: Session, reason: DropReason) {
    if (watched.cut) return;
    watched.cut = true;
    watched.session.destroy();
    watched.socket.destroy();
    events.onConnectionDropped?.({ reason, protocol: "http2" });
  }

  function unsent(watched: Session): number {
    let bytes = unsentBytes(watched.socket);
    for (const stream of watched.streams) bytes += stream.writableLength;
    return bytes;
  }

  function goaway(watched: Session) {
    watched.goawaySent = true;
    watched.session.close();
    setTimeout(() => {
      if (!watched.session.destroyed) drop(watched, "goaway-ignored");
    }, limits.goawayGraceMs).unref();
  }

  /**
   * watchHeaderBlock finds a header block left open. nghttp2 counts a stream
   * as processed when its HEADERS frame begins, and hands it to JavaScript
   * when the block ends; a stream it resets itself (malformed headers, over a
   * limit) is processed and never handed over either. A PING tells the two
   * apart: a client inside a header block cannot answer it (no other frame
   * may come between HEADERS and its last CONTINUATION, RFC 9113 §6.10).
   */
  function watchHeaderBlock(watched: Session, now: number): boolean {
    const processed = watched.session.state.lastProcStreamID ?? 0;
    if (processed <= Math.max(watched.lastStreamId, watched.settledStreamId)) {
      watched.openHeaderBlock = undefined;
      return false;
    }
    if (watched.openHeaderBlock?.streamId !== processed) {
      watched.openHeaderBlock = { streamId: processed, since: now };
      try {
        watched.session.ping((error) => {
          if (!error) watched.settledStreamId = Math.max(watched.settledStreamId, processed);
        });
      } catch {
        // Too many PINGs outstanding: the deadline still applies.
      }
      return false;
    }
    if (now - watched.openHeaderBlock.since < limits.headersTimeoutMs) return false;
    drop(watched, "headers-timeout");
    return true;
  }

  function check(watched: Session, now: number) {
    const { session } = watched;
    if (session.destroyed || watched.cut) return;
    if (watchHeaderBlock(watched, now)) return;
    if (!watched.goawaySent && watched.streams.size === 0 && now - watched.idleSince >= limits.idleTimeoutMs) goaway(watched);
    const progress = flushedBytes(watched.socket) - watched.ackBytes;
    if (watched.writes.check(now, unsent(watched), progress)) drop(watched, "write-timeout");
  }

  server.on("session", (session: http2.ServerHttp2Session) => {
    const socket = arriving;
    if (!socket) {
      session.destroy();
      return;
    }
    const now = options.now();
    const watched: Session = {
      session,
      socket,
      streams: new Set(),
      lastStreamId: 0,
      idleSince: now,
      goawaySent: false,
      settledStreamId: 0,
      ackBytes: 0,
      writes: createWriteWatch(limits.writeTimeoutMs, now),
      cut: false,
    };
    sessions.set(session, watched);
    const stopWatching = options.sweep.add((at) => check(watched, at));
    session.once("close", () => {
      sessions.delete(session);
      stopWatching();
    });
    session.on("ping", () => (watched.ackBytes += pingAckBytes));
    session.on("remoteSettings", () => (watched.ackBytes += settingsAckBytes));
    // A connection error (nghttp2 sent GOAWAY): the session is destroyed with it.
    session.on("error", () => {
      if (!watched.cut) events.onConnectionDropped?.({ reason: "protocol-error", protocol: "http2" });
    });
    session.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number) => {
      watched.streams.add(stream);
      watched.lastStreamId = Math.max(watched.lastStreamId, stream.id ?? 0);
      stream.once("close", () => {
        watched.streams.delete(stream);
        if (watched.streams.size === 0) watched.idleSince = options.now();
      });
      limitRequestTime(stream, headers, flags);
    });
    if (closing) session.close();
  });

  /**
   * limitRequestTime cancels a stream (RST_STREAM CANCEL) whose request has
   * not fully arrived within requestTimeoutMs: the HTTP/2 side of the
   * HTTP/1.1 server's requestTimeout. A request that ended with its headers
   * has no body to wait for.
   */
  function limitRequestTime(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number) {
    if (flags & NGHTTP2_FLAG_END_STREAM) return;
    const timer = setTimeout(() => {
      if (stream.destroyed) return;
      stream.close(NGHTTP2_CANCEL);
      events.onRefused?.({
        protocol: "http2",
        status: 408,
        reason: "request did not arrive in time",
        requestId: options.requestId(headers["x-request-id"]),
        durationMs: limits.requestTimeoutMs,
        http2ErrorCode: NGHTTP2_CANCEL,
      });
    }, limits.requestTimeoutMs);
    timer.unref();
    const done = () => clearTimeout(timer);
    stream.once("end", done);
    stream.once("close", done);
  }

  /**
   * admit says whether the handler may have a request, reporting resets
   * when the stream closes. The session is looked up once: a stream whose
   * session failed in the same read arrives without one.
   */
  function admit(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): boolean {
    const { stream } = req;
    const watched = stream.session ? sessions.get(stream.session as http2.ServerHttp2Session) : undefined;
    const started = options.now();
    stream.once("close", () => reportReset(watched, req, res, started));
    if (watched && unsent(watched) >= limits.maxUnsentBytes) {
      stream.close(NGHTTP2_REFUSED_STREAM);
      events.onRefused?.({
        protocol: "http2",
        status: 503,
        reason: "responses not read",
        requestId: options.requestId(req.headers["x-request-id"]),
        http2ErrorCode: NGHTTP2_REFUSED_STREAM,
      });
      return false;
    }
    return true;
  }

  server.on("request", (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    if (admit(req, res)) options.handler(req, res);
  });
  // This server is nobody's proxy. Node's compatibility layer emits CONNECT
  // here, never as a request, and answers a bare 405 when nobody listens.
  server.on("connect", (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    const requestId = options.requestId(req.headers["x-request-id"]);
    answerRequest(res, 501, "CONNECT is not supported: this server is not a proxy", requestId);
    events.onRefused?.({ protocol: "http2", status: 501, reason: "CONNECT", requestId });
  });

  /**
   * reportReset reports a stream reset for a protocol error (by nghttp2, or
   * by the client telling the server it erred) before its response was
   * complete. A client's CANCEL is an abort, which the request log sees; a
   * REFUSED_STREAM and a request timeout are reported where they happen; the
   * resets of a session the listener cut are not the stream's doing.
   */
  function reportReset(watched: Session | undefined, req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, started: number) {
    const code = req.stream.rstCode ?? NGHTTP2_NO_ERROR;
    if ([NGHTTP2_NO_ERROR, NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM].includes(code) || res.writableFinished) return;
    if (watched?.cut || closing) return;
    events.onRefused?.({
      protocol: "http2",
      status: res.headersSent ? res.statusCode : 400,
      reason: `stream reset: ${http2ErrorName(code)}`,
      requestId: options.requestId(req.headers["x-request-id"]),
      durationMs: Math.round(options.now() - started),
      http2ErrorCode: code,
    });
  }

  return {
    take(socket) {
      // The http2 server creates the session, and emits 'session', while
      // 'connection' is emitted: the session's own socket is a guarded proxy.
      arriving = socket;
      try {
        server.emit("connection", socket);
      } finally {
        arriving = undefined;
      }
    },
    beginClose() {
      closing = true;
      for (const watched of sessions.values()) {
        watched.goawaySent = true;
        watched.session.close();
      }
    },
  };
}

/** The HTTP/2 error codes (RFC 9113 §7), by value. */
const http2ErrorNames = [
  "NO_ERROR",
  "PROTOCOL_ERROR",
  "INTERNAL_ERROR",
  "FLOW_CONTROL_ERROR",
  "SETTINGS_TIMEOUT",
  "STREAM_CLOSED",
  "FRAME_SIZE_ERROR",
  "REFUSED_STREAM",
  "CANCEL",
  "COMPRESSION_ERROR",
  "CONNECT_ERROR",
  "ENHANCE_YOUR_CALM",
  "INADEQUATE_SECURITY",
  "HTTP_1_1_REQUIRED",
];

/** http2ErrorName names an RST_STREAM or GOAWAY error code. */
function http2ErrorName(code: number): string {
  return http2ErrorNames[code] ?? `error code ${code}`;
}
