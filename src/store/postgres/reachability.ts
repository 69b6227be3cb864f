/**
 * ReachabilityState is what the pool's own calls tell about the database,
 * without a query of its own: whether it answers, and since when.
 */
export interface ReachabilityState {
  /**
   * False once an attempt to reach the database failed (no connection, no
   * answer) and nothing has answered since; true otherwise, also before the
   * first call.
   */
  reachable: boolean;
  /** When the current state began (wall clock); undefined before any call. */
  since: Date | undefined;
  /** How long the database has been unreachable (0 while reachable), on a monotonic clock. */
  unreachableForMs: number;
  /** When a statement was last answered (wall clock). */
  lastAnsweredAt: Date | undefined;
  /** The last failure to reach it: a fixed description that never holds an address or a message. */
  lastFailure: { reason: string; at: Date } | undefined;
}

/** A change of reachability, for the log. */
export type ReachabilityChange =
  | { kind: "unreachable"; reason: string; since: Date }
  | { kind: "reachable"; unreachableForMs: number };

/** Reachability records the outcome of every attempt to use the database. */
export interface Reachability {
  /** The database answered a statement (with rows or with an error of the statement's own). */
  answered(): void;
  /** An attempt to reach the database failed: no connection, a connection lost, no answer at all. */
  failed(reason: string): void;
  state(): ReachabilityState;
}

export interface ReachabilityOptions {
  /** Monotonic milliseconds (performance.now by default): durations survive a wall-clock step. */
  monotonicNow?: () => number;
  /** Wall-clock time for what operators read. */
  wallNow?: () => Date;
  onChange?(change: ReachabilityChange): void;
}

/**
 * createReachability keeps the one fact readiness needs from the pool: since
 * when every attempt to reach the database has failed. One answer of any
 * kind ends that, so a slow or blocked query (answered by its timeout), a
 * saturated pool (its calls still get answers) or one lost connection among
 * working ones never counts as the database being gone.
 */
export function createReachability(options: ReachabilityOptions = {}): Reachability {
  const monotonicNow = options.monotonicNow ?? (() => performance.now());
  const wallNow = options.wallNow ?? (() => new Date());
  let since: Date | undefined;
  let failingSince: number | undefined;
  let lastAnsweredAt: Date | undefined;
  let lastFailure: { reason: string; at: Date } | undefined;

  return {
    answered() {
      const now = wallNow();
      lastAnsweredAt = now;
      if (failingSince !== undefined) {
        const unreachableForMs = monotonicNow() - failingSince;
        failingSince = undefined;
        since = now;
        options.onChange?.({ kind: "reachable", unreachableForMs });
      } else {
        since ??= now;
      }
    },
    failed(reason) {
      const now = wallNow();
      lastFailure = { reason, at: now };
      if (failingSince === undefined) {
        failingSince = monotonicNow();
        since = now;
        options.onChange?.({ kind: "unreachable", reason, since: now });
      }
    },
    state: () => ({
      reachable: failingSince === undefined,
      since,
      unreachableForMs: failingSince === undefined ? 0 : Math.max(0, monotonicNow() - failingSince),
      lastAnsweredAt,
      lastFailure,
    }),
  };
}

/**
 * SQLSTATEs with which PostgreSQL (or a pooler in front of it) refuses or
 * ends a session rather than a statement: connection exceptions (08, which
 * PgBouncer also uses when it cannot log in to the server), invalid
 * authorization (28), a database that does not exist (3D000), too many
 * connections (53300), and shutdown, crash or start-up (57P01–57P04). Every
 * other server error is an answer: the database is there.
 */
const unreachableStates = /^(08|28|3D000|53300|57P0[1-4])/;

/** The message pg-pool gives a call that waited for a free connection of a full pool: saturation, not unreachability. */
export const poolQueueTimeoutMessage = "timeout exceeded when trying to connect";

/**
 * describeFailure says whether error means the database could not be reached
 * and, if so, how, in words fit for /readyz (which needs no key): a
 * SQLSTATE or a socket error code, never a server message or an address.
 * Undefined means it was an answer (or a full pool), not a failure to reach.
 */
export function describeFailure(error: unknown): string | undefined {
  const { code, severity, message } = (error ?? {}) as { code?: unknown; severity?: unknown; message?: unknown };
  if (typeof severity === "string") {
    return typeof code === "string" && unreachableStates.test(code) ? `the server ended the session (SQLSTATE ${code})` : undefined;
  }
  if (message === poolQueueTimeoutMessage) return undefined;
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return `the connection failed (${code})`;
  if (typeof message === "string") {
    if (message.startsWith("Connection terminated due to connection timeout")) return "no connection within the deadline";
    if (message.startsWith("Connection terminated")) return "the connection was closed";
    if (message.startsWith("no answer from the database")) return "no answer within the deadline";
  }
  return "the connection failed";
}
