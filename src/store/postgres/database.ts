import pg from "pg";
import { sendCancelRequest } from "./cancel-request.js";
import { databaseUnavailable, toStoreError, unavailableMessage } from "./database-errors.js";
import { StatementPipeline, type StatementStep, type StepResult } from "./statement-pipeline.js";
import { createPreparedStatements } from "./prepared-statements.js";
import { createReachability, describeFailure, type ReachabilityChange, type ReachabilityState } from "./reachability.js";

/** DatabaseOptions: where the stores connect and the deadline every call runs under. */
export interface DatabaseOptions {
  /** postgres://user:password@host:port/database; a PgBouncer in transaction pooling is fine. */
  url: string;
  /** Most connections this process opens. */
  poolMax: number;
  /**
   * The deadline of one store call, from its start: waiting for a pooled
   * connection, then every statement, enforced by PostgreSQL itself.
   */
  statementTimeoutMs: number;
  /** Longest a statement waits for a lock (a row held by a checkout) before giving up; at most statementTimeoutMs. */
  lockTimeoutMs: number;
  /**
   * How long past the deadline the client waits for a server that has not
   * answered before it cancels the statement and drops the connection.
   */
  backstopMarginMs?: number;
  /** application_name, as pg_stat_activity shows it. */
  applicationName?: string;
  /** Told when the database stops or starts answering this pool (for the log). */
  onReachabilityChange?(change: ReachabilityChange): void;
}

/**
 * PoolState is what the pool knows without asking the database: whether its
 * calls reach it (see reachability.ts) and how its connections are used.
 */
export interface PoolState extends ReachabilityState {
  /** Connections open (idle and in use). */
  open: number;
  idle: number;
  /** Calls waiting for a connection of a full pool. */
  waiting: number;
  /** DB_POOL_MAX. */
  max: number;
  /** Calls that gave up waiting for a connection of a full pool since start (answered 503, nothing sent). */
  saturatedCalls: number;
}

/** Transaction is an explicit transaction on one connection, under one deadline. */
export interface Transaction {
  /** Sends steps in one round trip (the first one also carries BEGIN and the deadline). */
  run(steps: readonly StatementStep[]): Promise<StepResult[]>;
  /**
   * Sends steps and COMMIT in one round trip, only while the deadline holds;
   * past it nothing is sent, the transaction is rolled back and the call
   * fails with Unavailable.
   */
  commit(steps: readonly StatementStep[]): Promise<StepResult[]>;
}

/**
 * Database runs the stores' statements on a pg pool, each call under a
 * deadline PostgreSQL enforces (see createDatabase).
 */
export interface Database {
  /**
   * Runs steps in one round trip as one implicit transaction, after a first
   * step that sets the deadline; returns each step's result. writes says
   * whether the steps change data: a write whose reply is lost fails with
   * "outcome unknown" rather than "unavailable".
   */
  run(writes: boolean, steps: readonly StatementStep[], observe?: (session: SessionInfo) => void): Promise<StepResult[]>;
  /** Runs work in an explicit transaction; rolled back unless work commits. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /** The values the deadline step sets when remainingMs of the deadline are left (for the settings check). */
  deadlineSettings(remainingMs: number): DeadlineSettings;
  /**
   * Turns named prepared statements on or off (off at first). Only for a
   * connection path where each connection is a PostgreSQL session of its
   * own; the settings check tells (preparedStatements.usable).
   */
  usePreparedStatements(enabled: boolean): void;
  /** The pool's own state: no statement is sent. */
  poolState(): PoolState;
  close(): Promise<void>;
}

/** What a call knows about the session it ran on (for the settings check). */
export interface SessionInfo {
  /** The backend process id the connection announced at start-up (BackendKeyData). */
  announcedProcessId: number | null;
  /** The deadline settings sent with the call. */
  deadline: DeadlineSettings;
}

/** The per-transaction settings a deadline sets, in ms. */
export interface DeadlineSettings {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/**
 * The deadline step. set_config(…, true) is SET LOCAL: it lasts until the
 * transaction ends, implicit or not, so nothing leaks to the next user of the
 * connection, and it works through PgBouncer in transaction pooling, which
 * refuses statement_timeout as a start-up parameter. The idle-in-transaction
 * timeout ends a transaction whose client vanished while it held row locks.
 */
const deadlineText =
  "select set_config('statement_timeout', $1, true), set_config('lock_timeout', $2, true), " +
  "set_config('idle_in_transaction_session_timeout', $3, true)";
const begin: StatementStep = { text: "begin", values: [] };
const commitStep: StatementStep = { text: "commit", values: [] };
const rollback: StatementStep = { text: "rollback", values: [] };

/** A pooled connection held by one call. */
interface Lease {
  client: pg.PoolClient;
  /** Set when the connection (not a statement) failed: it is dropped, not reused. */
  broken?: Error;
  /** Set when the backstop took the connection over: it hands it back itself. */
  abandoned: boolean;
  /** While abandoned: destroys the connection and hands it back, once. */
  handBack?: () => void;
}

const unavailable = (cause?: unknown) => databaseUnavailable(unavailableMessage, cause);

/**
 * createDatabase opens the pool the PostgreSQL stores share. Every call:
 * - has a deadline of statementTimeoutMs from its start, which covers the
 *   wait for a pooled connection (a full pool answers Unavailable, having sent
 *   nothing) and every statement;
 * - sends the deadline to PostgreSQL as the first statement of the same round
 *   trip (statement_timeout = what is left of it, lock_timeout = the smaller
 *   of lockTimeoutMs and that), so the server itself cancels a statement
 *   past the deadline and the transaction never commits after it;
 * - keeps a backstop on the client: if the server has not answered by the
 *   deadline plus backstopMarginMs (a network that stopped forwarding, a
 *   server that hangs), it sends PostgreSQL a cancel request for the backend
 *   and destroys the connection, so no abandoned statement keeps running or
 *   keeps a backend.
 * Values always travel as bind parameters; no statement text ever holds one.
 */
export function createDatabase(options: DatabaseOptions): Database {
  const margin = options.backstopMarginMs ?? 250;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax,
    idleTimeoutMillis: 30_000,
    // Acquiring a connection is the first thing a call does, so this is the
    // call's own deadline for it.
    connectionTimeoutMillis: options.statementTimeoutMs,
    application_name: options.applicationName ?? "payment-intents",
    keepAlive: true,
  });
  const prepared = createPreparedStatements();
  let usePrepared = false;
  // A pooled connection that fails while idle is dropped by the pool; one that
  // fails while in use fails its pipeline. Either way the error is handled
  // there, and an 'error' event without a listener would end the process.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  // Every call's outcome feeds it; readiness reads it instead of pinging.
  const reachability = createReachability({ onChange: options.onReachabilityChange });
  let saturatedCalls = 0;
  /** Records what a call's error says about the database: an answer, a failure to reach it, or a full pool. */
  const observe = (error: unknown) => {
    const failure = describeFailure(error);
    if (failure !== undefined) reachability.failed(failure);
    else if ((error as { severity?: unknown } | undefined)?.severity !== undefined) reachability.answered();
    else saturatedCalls++;
  };

  const settingsFor = (remainingMs: number): DeadlineSettings => ({
    statementTimeoutMs: remainingMs,
    lockTimeoutMs: Math.min(options.lockTimeoutMs, remainingMs),
    idleInTransactionTimeoutMs: remainingMs + margin,
  });

  /** The deadline step for what is left of the deadline; undefined when nothing is. */
  function deadlineStep(deadline: number): (StatementStep & { settings: DeadlineSettings }) | undefined {
    const remaining = Math.ceil(deadline - performance.now());
    // 0 would mean "no timeout" to PostgreSQL: past the deadline nothing is sent.
    if (remaining < 1) return undefined;
    const settings = settingsFor(remaining);
    return {
      text: deadlineText,
      values: [String(settings.statementTimeoutMs), String(settings.lockTimeoutMs), String(settings.idleInTransactionTimeoutMs)],
      settings,
    };
  }

  async function acquire(): Promise<pg.PoolClient> {
    try {
      return await pool.connect();
    } catch (error) {
      observe(error);
      throw unavailable(error);
    }
  }

  /**
   * Sends steps as one pipeline on the lease's connection. Resolves with every
   * step's result; rejects with the store error. A connection that failed (not
   * a statement) is marked broken, to be dropped instead of reused.
   *
   * Past the deadline plus the margin without an answer, the call fails at
   * once and the lease is abandoned: PostgreSQL is asked to cancel the
   * backend's statement, and the connection is destroyed and handed back
   * once the statement has ended (the cancel's error arrived) or, failing
   * that, after four margins more. Destroying it at once would not stop the
   * statement (PostgreSQL notices a vanished client only when it next writes
   * to it), and PgBouncer drops a cancel for a client that is already gone.
   * It is never reused: a cancel that arrived late could hit its next user.
   */
  function send(
    lease: Lease,
    steps: readonly StatementStep[],
    deadline: number,
    outcome: { writes: boolean; commits: boolean },
  ): Promise<StepResult[]> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: Error, pipeline: StatementPipeline) => {
        settled = true;
        reject(
          toStoreError(error, {
            writes: outcome.writes,
            commitSent: outcome.commits && pipeline.sent,
            allCompleted: pipeline.completed === steps.length,
          }),
        );
      };
      const pipeline = new StatementPipeline(steps, (error, results) => {
        clearTimeout(backstop);
        if (error) observe(error);
        else reachability.answered();
        if (settled) {
          lease.handBack?.();
          return;
        }
        if (!error) {
          settled = true;
          return resolve(results);
        }
        if ((error as { severity?: string }).severity !== "ERROR") lease.broken = error;
        fail(error, pipeline);
      }, usePrepared ? prepared : undefined);
      const backstop = setTimeout(() => {
        lease.abandoned = true;
        const silence = new Error(`no answer from the database within the deadline and ${margin} ms`);
        observe(silence);
        fail(silence, pipeline);
        const { client } = lease;
        const handBack = () => {
          lease.handBack = undefined;
          clearTimeout(giveUp);
          (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
          client.release(new Error("abandoned after the deadline"));
        };
        const giveUp = setTimeout(handBack, margin * 4);
        lease.handBack = handBack;
        sendCancelRequest(client, margin * 4);
      }, Math.max(0, deadline - performance.now()) + margin);
      lease.client.query(pipeline);
    });
  }

  /** Hands the lease's connection back to the pool, dropping it if broken; an abandoned one is handed back by its cancel. */
  function release(lease: Lease): void {
    if (!lease.abandoned) lease.client.release(lease.broken);
  }

  return {
    async run(writes, steps, observe) {
      const deadline = performance.now() + options.statementTimeoutMs;
      const lease: Lease = { client: await acquire(), abandoned: false };
      try {
        const first = deadlineStep(deadline);
        if (!first) throw unavailable();
        const announced = (lease.client as unknown as { processID?: number | null }).processID;
        observe?.({ announcedProcessId: typeof announced === "number" ? announced : null, deadline: first.settings });
        const results = await send(lease, [first, ...steps], deadline, { writes, commits: true });
        return results.slice(1);
      } finally {
        release(lease);
      }
    },

    async transaction(work) {
      const deadline = performance.now() + options.statementTimeoutMs;
      const lease: Lease = { client: await acquire(), abandoned: false };
      // Changed by trip(); declared wide so the finally block's check is not narrowed away.
      let state = "idle" as "idle" | "open" | "ended";

      async function trip(steps: readonly StatementStep[], commits: boolean): Promise<StepResult[]> {
        if (state === "ended") throw new Error("the transaction has ended");
        if (lease.broken || lease.abandoned) throw unavailable(lease.broken);
        const first = deadlineStep(deadline);
        // Past the deadline: send nothing more; the finally block rolls back.
        if (!first) throw unavailable();
        const head = state === "idle" ? [begin, first] : [first];
        state = "open";
        const all = commits ? [...head, ...steps, commitStep] : [...head, ...steps];
        const results = await send(lease, all, deadline, { writes: commits, commits });
        if (commits) state = "ended";
        return results.slice(head.length, head.length + steps.length);
      }

      try {
        return await work({ run: (steps) => trip(steps, false), commit: (steps) => trip(steps, true) });
      } finally {
        if (state === "open" && !lease.broken && !lease.abandoned) {
          // Ends the transaction and frees its locks; bounded by the margin
          // alone, since the deadline may already have passed.
          await send(lease, [rollback], performance.now(), { writes: false, commits: false }).catch((error: unknown) => {
            lease.broken ??= error instanceof Error ? error : new Error(String(error));
          });
        }
        release(lease);
      }
    },

    deadlineSettings: settingsFor,

    usePreparedStatements(enabled) {
      usePrepared = enabled;
    },

    poolState: () => ({
      ...reachability.state(),
      open: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: options.poolMax,
      saturatedCalls,
    }),

    close: () => pool.end(),
  };
}
