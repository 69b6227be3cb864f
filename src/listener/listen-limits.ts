/** ListenLimits bound what one client can hold on to (README, Limits). */
export interface ListenLimits {
  /**
   * Longest from a connection's first byte (or, on keep-alive, a request's
   * first byte) until its request headers are complete; on HTTP/2, longest a
   * header block (HEADERS and its CONTINUATION frames) may stay incomplete.
   * Also how long a new connection may stay silent before it is closed.
   */
  headersTimeoutMs: number;
  /** Longest until a whole request, body included, has arrived (HTTP/1.1 and per HTTP/2 stream). */
  requestTimeoutMs: number;
  /** Longest a connection may sit without requests: HTTP/1.1 keep-alive and HTTP/2 sessions. */
  idleTimeoutMs: number;
  /** Concurrent streams one HTTP/2 connection may open (SETTINGS_MAX_CONCURRENT_STREAMS, RFC 9113 §6.5.2). */
  maxConcurrentStreams: number;
  /**
   * Longest a connection that owes response bytes may go without any of them
   * reaching the client (no write progress); it is then destroyed. A slow
   * client that keeps reading makes progress and is never cut.
   */
  writeTimeoutMs: number;
  /**
   * Requests one HTTP/1.1 connection may have waiting for their responses
   * (being handled, queued behind an earlier response, or unsent). The next
   * one is answered 429 and the connection closes after it.
   */
  maxPipelinedRequests: number;
  /**
   * Response bytes one connection may have unsent before it is given no new
   * work: HTTP/2 streams are refused (REFUSED_STREAM, safe to retry), an
   * HTTP/1.1 pipelined request is answered 429 and the connection closes.
   */
  maxUnsentBytes: number;
  /** Connections open at once, in total; beyond it new connections are closed unserved. */
  maxConnections: number;
  /** Connections open at once from one client address. */
  maxConnectionsPerAddress: number;
  /**
   * Connections the host's own loopback address (127.0.0.1, ::1) may open
   * beyond maxConnections, so a local health check still gets in when
   * clients elsewhere have taken every slot.
   */
  loopbackReserve: number;
  /** How long an idle HTTP/2 session may stay open after its GOAWAY before it is destroyed. */
  goawayGraceMs: number;
}

/**
 * The most connections the defaults allow: far more than one instance with
 * two cores serves well, and few enough that clients holding their
 * maxUnsentBytes each cannot take the memory of a small container.
 */
export const defaultMaxConnections = 4096;

/**
 * Descriptors kept for the process itself beside the database pool: standard
 * streams, the event loop, the files and pipes Node opens, log output.
 */
export const processDescriptors = 64;

/**
 * The defaults: generous for a JSON API with 64 KiB bodies, short enough that
 * slow clients cannot pile up. The idle timeout outlasts the 60 s idle timeout
 * common in load balancers, so the balancer, not the service, closes an idle
 * pooled connection (the other way round races a request against the close).
 * A quarter of the connections per address leaves three quarters to everyone
 * else however one client behaves, and still lets a proxy in front pool
 * plenty of connections.
 */
export const defaultListenLimits: ListenLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 65_000,
  maxConcurrentStreams: 100,
  writeTimeoutMs: 30_000,
  maxPipelinedRequests: 16,
  maxUnsentBytes: 256 * 1024,
  maxConnections: defaultMaxConnections,
  maxConnectionsPerAddress: defaultMaxConnections / 4,
  loopbackReserve: 8,
  goawayGraceMs: 1000,
};

/**
 * connectionBudget is how many connections the open file limit leaves room
 * for: one descriptor each, after the database pool, the process's own
 * descriptors and the loopback reserve. Past it accept() fails with EMFILE
 * and every client, health checks included, is turned away.
 */
export function connectionBudget(openFileLimit: number, poolMax: number, loopbackReserve: number): number {
  return openFileLimit - poolMax - processDescriptors - loopbackReserve;
}
