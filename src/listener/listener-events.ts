import type { CapRefusal } from "./connection-caps.js";

/**
 * RefusedRequest is a request the listener answered (or reset) itself, so
 * the handler, and with it the request log and metrics, never saw it: Node's
 * parser errors and timeouts, a missing Host, an unmet Expect, CONNECT, too
 * many pipelined requests, and HTTP/2 streams reset by the protocol layer.
 */
export interface RefusedRequest {
  protocol: "http1" | "http2";
  /**
   * The HTTP status the client got. For an HTTP/2 stream reset before its
   * response started, the status the reset stands for: 408 for a request
   * that did not arrive in time, 503 for a refused stream (REFUSED_STREAM,
   * safe to retry), 400 for a protocol error.
   */
  status: number;
  /** Why, in a few words; never a header value or anything else the client sent. */
  reason: string;
  /** The X-Request-Id the answer carries (the client's when it was sane and sent, else generated). */
  requestId: string;
  /** From the request's first byte (or the connection's) to the answer, when known. */
  durationMs?: number;
  /** For an HTTP/2 stream reset: the RST_STREAM error code (RFC 9113 §7). */
  http2ErrorCode?: number;
}

/**
 * Why the listener closed a connection unserved, or cut it: the caps at
 * accept time, a connection silent or stuck inside a header block for
 * HEADERS_TIMEOUT_MS, a client that stopped reading (WRITE_TIMEOUT_MS), an
 * idle HTTP/2 session still open a grace after its GOAWAY, an HTTP/2
 * connection error, and the PROXY protocol: a header from an untrusted peer,
 * or a trusted peer's header missing, malformed or late.
 */
export type DropReason =
  | CapRefusal
  | "headers-timeout"
  | "write-timeout"
  | "goaway-ignored"
  | "protocol-error"
  | "proxy-header-untrusted"
  | "proxy-header-invalid"
  | "proxy-header-timeout";

export interface DroppedConnection {
  reason: DropReason;
  /** Unknown before the first bytes are read (the caps, a silent connection). */
  protocol?: "http1" | "http2";
}

/**
 * ListenerEvents tell the integrator what happened outside the handler, for
 * the request log and metrics. Both are called synchronously and must not
 * throw.
 */
export interface ListenerEvents {
  onRefused?(event: RefusedRequest): void;
  onConnectionDropped?(event: DroppedConnection): void;
}
