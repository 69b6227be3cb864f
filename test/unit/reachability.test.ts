import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createReachability, describeFailure, poolQueueTimeoutMessage, type ReachabilityChange } from "../../src/store/postgres/reachability.js";

function clocks() {
  let mono = 0;
  let wall = Date.parse("2026-11-23T10:00:00.000Z");
  return {
    monotonicNow: () => mono,
    wallNow: () => new Date(wall),
    advance(ms: number) {
      mono += ms;
      wall += ms;
    },
  };
}

/** A PostgreSQL ErrorResponse as node-postgres reports it. */
const serverError = (code: string, severity = "ERROR", message = "server says so") => Object.assign(new Error(message), { code, severity });
const socketError = (code: string) => Object.assign(new Error(`connect ${code} 10.1.2.3:5432`), { code });

describe("createReachability", () => {
  it("is reachable before any call, unreachable from the first failure until the next answer", () => {
    const time = clocks();
    const changes: ReachabilityChange[] = [];
    const reachability = createReachability({ ...time, onChange: (change) => changes.push(change) });
    assert.deepEqual(reachability.state(), { reachable: true, since: undefined, unreachableForMs: 0, lastAnsweredAt: undefined, lastFailure: undefined });

    reachability.answered();
    const firstAnswer = time.wallNow();
    time.advance(1000);
    reachability.failed("the connection failed (ECONNREFUSED)");
    const failedAt = time.wallNow();
    time.advance(2000);
    reachability.failed("no connection within the deadline");
    time.advance(500);
    assert.deepEqual(reachability.state(), {
      reachable: false,
      since: failedAt,
      unreachableForMs: 2500,
      lastAnsweredAt: firstAnswer,
      lastFailure: { reason: "no connection within the deadline", at: new Date(failedAt.getTime() + 2000) },
    });

    reachability.answered();
    const state = reachability.state();
    assert.equal(state.reachable, true);
    assert.equal(state.unreachableForMs, 0);
    assert.deepEqual(state.since, time.wallNow());
    assert.deepEqual(changes, [
      { kind: "unreachable", reason: "the connection failed (ECONNREFUSED)", since: failedAt },
      { kind: "reachable", unreachableForMs: 2500 },
    ]);
  });
});

describe("describeFailure", () => {
  const cases: { name: string; error: unknown; want: string | undefined }[] = [
    { name: "a lock timeout is an answer", error: serverError("55P03"), want: undefined },
    { name: "a statement timeout is an answer", error: serverError("57014"), want: undefined },
    { name: "a constraint violation is an answer", error: serverError("23505"), want: undefined },
    { name: "a serialization failure is an answer", error: serverError("40001"), want: undefined },
    { name: "a full pool is not a failure to reach", error: new Error(poolQueueTimeoutMessage), want: undefined },
    { name: "an administrator's shutdown", error: serverError("57P01", "FATAL"), want: "the server ended the session (SQLSTATE 57P01)" },
    { name: "a server starting up", error: serverError("57P03", "FATAL"), want: "the server ended the session (SQLSTATE 57P03)" },
    {
      name: "PgBouncer failing to log in to the server",
      error: serverError("08P01", "FATAL", "server login has been failing, try again later (server_login_retry)"),
      want: "the server ended the session (SQLSTATE 08P01)",
    },
    { name: "a wrong password", error: serverError("28P01", "FATAL"), want: "the server ended the session (SQLSTATE 28P01)" },
    { name: "a missing database", error: serverError("3D000", "FATAL"), want: "the server ended the session (SQLSTATE 3D000)" },
    { name: "too many connections", error: serverError("53300", "FATAL"), want: "the server ended the session (SQLSTATE 53300)" },
    { name: "a refused connection, without its address", error: socketError("ECONNREFUSED"), want: "the connection failed (ECONNREFUSED)" },
    { name: "an unknown host, without its name", error: socketError("ENOTFOUND"), want: "the connection failed (ENOTFOUND)" },
    { name: "a connect timeout", error: new Error("Connection terminated due to connection timeout"), want: "no connection within the deadline" },
    { name: "a connection lost", error: new Error("Connection terminated unexpectedly"), want: "the connection was closed" },
    { name: "the backstop", error: new Error("no answer from the database within the deadline and 250 ms"), want: "no answer within the deadline" },
    { name: "anything else on the socket", error: new Error("Client has encountered a connection error and is not queryable"), want: "the connection failed" },
  ];
  for (const { name, error, want } of cases) {
    it(name, () => assert.equal(describeFailure(error), want));
  }
});
