import { Code, ConnectError } from "@connectrpc/connect";
import { unstorableTextMessage } from "../storable-text.js";

/** The answer when the database cannot serve a request now and nothing was written. */
export const unavailableMessage = "the database is unavailable; retry later";

/**
 * The answer when a write was sent but its outcome never came back (the
 * connection broke, or the server stopped answering, after the message that
 * decides the commit). The write may have happened; every write of the service
 * converges when repeated (a create by its clientReference, a cancel or a
 * payment by the intent's status), so retrying the same request is safe.
 */
export const outcomeUnknownMessage = "the database did not confirm the write; retry the same request: it is safe";

/** Fixed answers for values the database refuses: never the server's text, which may quote the value. */
export const refusedValueMessages = {
  text: unstorableTextMessage,
  value: "a value in the request has a form or size the database cannot store",
  constraint: "the request conflicts with a rule of the stored data",
} as const;

/** A PostgreSQL ErrorResponse as node-postgres reports it. */
interface ServerError {
  code?: string;
  severity?: string;
}

/** What the client knows about how far a statement or transaction got. */
export interface Outcome {
  /** Whether the operation writes: a lost reply to a write leaves its outcome unknown. */
  writes: boolean;
  /** Whether the message deciding the commit reached the socket. */
  commitSent: boolean;
  /** Whether every statement of the round trip had completed when the error came. */
  allCompleted: boolean;
}

/**
 * Seconds a client should wait before retrying a request the database could
 * not serve: every database 503 carries it as Retry-After (RFC 9110
 * §10.2.3), over REST and as RPC response metadata. One second: most
 * failures are a blip, a restart or a failover measured in seconds, and a
 * client that backs off further on repeated 503s is better served than one
 * told to wait a fixed long time.
 */
export const databaseRetryAfterSeconds = 1;

/**
 * databaseUnavailable is the store's 503: Unavailable with the given message
 * (unavailableMessage or outcomeUnknownMessage) and Retry-After.
 */
export function databaseUnavailable(message: string, cause?: unknown): ConnectError {
  return new ConnectError(message, Code.Unavailable, { "retry-after": String(databaseRetryAfterSeconds) }, undefined, cause);
}

const unavailable = (cause: unknown) => databaseUnavailable(unavailableMessage, cause);
const refused = (message: string, cause: unknown) => new ConnectError(message, Code.InvalidArgument, undefined, undefined, cause);

// SQLSTATEs that mean "the database cannot serve this now, and this
// transaction did not commit" (PostgreSQL, Appendix A): connection exceptions
// (08), insufficient resources (53), operator intervention (57: query
// canceled by our deadline 57014, admin or crash shutdown 57P0x), lock not
// available (55P03, our lock_timeout), serialization failure and deadlock
// (40001, 40P01), and a read-only transaction (25006: a standby or a read-only
// switch during failover).
const unavailableStates = /^(08|53|57|55P03|40001|40P01|25006)/;

/**
 * toStoreError turns a failure of a store call into what the client is told:
 * - the server refused a value (SQLSTATE class 22 data exception, 23
 *   integrity constraint violation): InvalidArgument with a fixed message, so
 *   no value is ever echoed and a bad value is never mistaken for an outage;
 * - the database could not serve it and nothing was written (a server error of
 *   the classes above, a failed connection, a full pool, or a write whose
 *   commit was never sent): Unavailable "the database is unavailable";
 * - a write whose commit was sent but not confirmed: Unavailable saying the
 *   outcome is unknown and the same request may be retried;
 * - anything else (a bug, such as an SQL error of ours) unchanged, to end as
 *   an internal error with the cause logged.
 */
export function toStoreError(error: unknown, outcome: Outcome): unknown {
  if (error instanceof ConnectError) return error;
  const { code, severity } = (error ?? {}) as ServerError;
  const fromServer = typeof severity === "string";
  if (fromServer && severity === "ERROR") {
    // An ERROR aborts the transaction: whatever it was, nothing was committed.
    if (code?.startsWith("22")) {
      return refused(code === "22021" || code === "22P05" ? refusedValueMessages.text : refusedValueMessages.value, error);
    }
    if (code?.startsWith("23")) return refused(refusedValueMessages.constraint, error);
    if (code !== undefined && unavailableStates.test(code)) return unavailable(error);
    return error;
  }
  // The connection failed (or the server ended the session with FATAL). A
  // FATAL in the middle of the statements means the transaction was aborted;
  // anything else after the commit was sent leaves the outcome unknown.
  const settledByServer = fromServer && !outcome.allCompleted;
  if (outcome.writes && outcome.commitSent && !settledByServer) {
    return databaseUnavailable(outcomeUnknownMessage, error);
  }
  if (fromServer && !(code !== undefined && unavailableStates.test(code))) return error;
  return unavailable(error);
}
