import type { Connection, Submittable } from "pg";
import type { PreparedStatements } from "./prepared-statements.js";

/**
 * One statement of a pipeline: SQL with `$n` placeholders and its values, as
 * text or null, or as a Buffer for a bytea parameter, which node-postgres
 * sends in binary format: its bytes as they are, with no hex text to build,
 * send and decode.
 */
export interface StatementStep {
  readonly text: string;
  readonly values: readonly (string | Buffer | null)[];
  /**
   * Planned with its values every time (an unnamed statement), never from a
   * generic plan: for a statement whose best plan depends on the values
   * (which of several meta filters is the rarest, and so drives the page).
   */
  readonly planEach?: true;
}

/** What one statement returned: its rows (every column as text or null) and its row count. */
export interface StepResult {
  rows: (string | null)[][];
  rowCount: number;
}

/** Where a pipeline got to: whether its messages were written, and whether the server answered an error. */
export interface StatementPipelineProgress {
  /** The messages (Sync included) were handed to the socket. */
  readonly sent: boolean;
  /** How many statements the server reported complete. */
  readonly completed: number;
}

/** The part of node-postgres' connection a pipeline writes to. */
interface WireConnection {
  readonly stream: { writable?: boolean; cork?(): void; uncork?(): void };
  parse(query: { text: string; name?: string; types?: number[] }): void;
  close(message: { type: "S" | "P"; name: string }): void;
  bind(config: { portal?: string; statement?: string; values?: readonly (string | Buffer | null)[] }): void;
  execute(config?: { portal?: string; rows?: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/** A CommandComplete message: its tag, e.g. "INSERT 0 1" or "SELECT 50". */
interface CommandComplete {
  text?: string;
}

const rowCountPattern = / (\d+)$/;

/**
 * StatementPipeline sends several statements in one round trip over node-postgres: for
 * each step Parse, Bind and Execute of the unnamed statement and portal, then
 * one Sync for all of them (PostgreSQL protocol §55.2.3, "Extended Query").
 * Everything before the Sync is one implicit transaction: a statement that
 * fails rolls back the steps before it and the server skips the rest, and the
 * server commits at the Sync, so a pipeline is all or nothing without
 * BEGIN/COMMIT round trips. Each Execute starts its own statement_timeout
 * clock, so a first step of `set_config('statement_timeout', …, true)`
 * bounds the steps after it, and the setting ends with the transaction
 * (verified on PostgreSQL 15 and through PgBouncer in transaction pooling by
 * test/postgres/deadline.test.ts).
 *
 * With prepared statements (a connection that is a session of its own), each
 * text is parsed once per connection as a named statement and then only
 * bound: a name whose state is unknown (a pipeline that prepared it failed)
 * is closed first, which PostgreSQL allows for a name that does not exist.
 *
 * It is a node-postgres Submittable (the mechanism pg-cursor uses): the
 * client hands it the connection when it is the active query and forwards it
 * every backend message until ReadyForQuery. Rows are kept as the text the
 * server sent: no Describe is sent, so node-postgres parses no types and
 * builds no row objects; the stores turn columns into records by position.
 */
export class StatementPipeline implements Submittable, StatementPipelineProgress {
  sent = false;
  completed = 0;
  readonly results: StepResult[];
  private settled = false;
  private readonly steps: readonly StatementStep[];
  private readonly done: (error: Error | undefined, results: StepResult[]) => void;
  private readonly prepared: PreparedStatements | undefined;
  /** This connection's prepared names, and those this pipeline prepares. */
  private preparedOnConnection: Map<string, "ready" | "unknown"> | undefined;
  private readonly preparing: string[] = [];

  constructor(
    steps: readonly StatementStep[],
    done: (error: Error | undefined, results: StepResult[]) => void,
    prepared?: PreparedStatements,
  ) {
    this.steps = steps;
    this.done = done;
    this.prepared = prepared;
    this.results = steps.map(() => ({ rows: [], rowCount: 0 }));
  }

  submit(connection: Connection): void {
    const wire = connection as unknown as WireConnection;
    // A socket already closed takes nothing: then nothing was sent.
    if (wire.stream.writable === false) return;
    // One write for every message: without cork each would be a send of its own.
    wire.stream.cork?.();
    try {
      const prepared = this.prepared;
      const onConnection = prepared ? (this.preparedOnConnection = prepared.on(connection)) : undefined;
      for (const step of this.steps) {
        if (!prepared || !onConnection || step.planEach) {
          wire.parse({ text: step.text });
          wire.bind({ values: step.values });
        } else {
          const name = prepared.nameOf(step.text);
          const state = onConnection.get(name);
          if (state !== "ready" && !this.preparing.includes(name)) {
            if (state === "unknown") wire.close({ type: "S", name });
            wire.parse({ text: step.text, name });
            this.preparing.push(name);
          }
          wire.bind({ statement: name, values: step.values });
        }
        wire.execute();
      }
      wire.sync();
      this.sent = true;
    } finally {
      wire.stream.uncork?.();
    }
  }

  handleRowDescription(): void {}

  handleDataRow(message: { fields: (string | null)[] }): void {
    this.results[this.completed]?.rows.push(message.fields);
  }

  handleCommandComplete(message: CommandComplete): void {
    const result = this.results[this.completed];
    if (result) {
      const count = message.text ? rowCountPattern.exec(message.text) : null;
      result.rowCount = count ? Number(count[1]) : result.rows.length;
    }
    this.completed++;
  }

  handleEmptyQuery(): void {
    this.completed++;
  }

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: Connection): void {
    (connection as unknown as WireConnection).sendCopyFail("COPY is not supported here");
  }

  handleCopyData(): void {}

  handleError(error: Error): void {
    this.settle(error);
  }

  handleReadyForQuery(): void {
    this.settle(undefined);
  }

  private settle(error: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    // After a failure a statement this pipeline prepared may or may not exist.
    for (const name of this.preparing) this.preparedOnConnection?.set(name, error ? "unknown" : "ready");
    this.done(error, this.results);
  }
}
