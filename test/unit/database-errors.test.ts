import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorReplyOf } from "../../src/http/write-json.js";
import { outcomeUnknownMessage, toStoreError, unavailableMessage } from "../../src/store/postgres/database-errors.js";

const serverError = (code: string, severity = "ERROR") => Object.assign(new Error("server text that may quote a value"), { code, severity });
const nothingSent = { writes: false, commitSent: false, allCompleted: false };
const commitLost = { writes: true, commitSent: true, allCompleted: false };

describe("toStoreError: the database's 503s", () => {
  const cases = [
    { name: "a lock timeout", error: serverError("55P03"), outcome: nothingSent, message: unavailableMessage },
    { name: "a statement timeout", error: serverError("57014"), outcome: nothingSent, message: unavailableMessage },
    { name: "a refused connection", error: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), outcome: nothingSent, message: unavailableMessage },
    { name: "a connection lost after COMMIT was sent", error: new Error("Connection terminated unexpectedly"), outcome: commitLost, message: outcomeUnknownMessage },
  ];
  for (const { name, error, outcome, message } of cases) {
    it(`answers ${name} 503 with Retry-After: 1 over REST and in the RPC metadata`, () => {
      const mapped = toStoreError(error, outcome);
      assert.ok(mapped instanceof ConnectError);
      assert.equal(mapped.code, Code.Unavailable);
      assert.equal(mapped.rawMessage, message);
      assert.equal(mapped.metadata.get("retry-after"), "1");
      assert.deepEqual(errorReplyOf(mapped), { status: 503, message, headers: { "retry-after": "1" } });
    });
  }

  it("adds no Retry-After to a value the database refused (400)", () => {
    const mapped = toStoreError(serverError("22001"), nothingSent);
    assert.deepEqual(errorReplyOf(mapped), {
      status: 400,
      message: "a value in the request has a form or size the database cannot store",
      headers: {},
    });
  });
});
