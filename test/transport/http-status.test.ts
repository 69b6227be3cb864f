import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { errorBody, httpStatusOf, reasonPhrase } from "../../src/http/http-status.js";

/** The table of the issue (§4 "Errors"); every other code is a server fault. */
const expected: Partial<Record<keyof typeof Code, number>> = {
  InvalidArgument: 400,
  Unauthenticated: 401,
  PermissionDenied: 403,
  NotFound: 404,
  AlreadyExists: 409,
  Aborted: 409,
  FailedPrecondition: 409,
  ResourceExhausted: 429,
  Unimplemented: 501,
  Unavailable: 503,
  DeadlineExceeded: 504,
};

/** Every member of the numeric Code enum, by name. */
const allCodes = Object.entries(Code).filter((entry): entry is [keyof typeof Code, Code] => typeof entry[1] === "number");

describe("httpStatusOf", () => {
  it("knows every Code there is", () => {
    // gRPC defines 16 non-OK codes; connect-es has no OK.
    assert.equal(allCodes.length, 16);
    for (const name of Object.keys(expected)) {
      assert.ok(allCodes.some(([n]) => n === name), `${name} is a Code`);
    }
  });

  for (const [name, code] of allCodes) {
    const status = expected[name] ?? 500;
    it(`maps ${name} (${code}) to ${status}`, () => {
      assert.equal(httpStatusOf(code), status);
    });
  }

  it("maps a code it has never heard of to 500", () => {
    assert.equal(httpStatusOf(99 as Code), 500);
  });
});

describe("errorBody", () => {
  const titles: [number, string][] = [
    [400, "Bad Request"],
    [401, "Unauthorized"],
    [403, "Forbidden"],
    [404, "Not Found"],
    [405, "Method Not Allowed"],
    [409, "Conflict"],
    [413, "Payload Too Large"],
    [415, "Unsupported Media Type"],
    [429, "Too Many Requests"],
    [500, "Internal Server Error"],
    [501, "Not Implemented"],
    [503, "Service Unavailable"],
    [504, "Gateway Timeout"],
  ];
  for (const [status, title] of titles) {
    it(`is {status: ${status}, title: "${title}", message}`, () => {
      const body = errorBody(status, "what went wrong");
      assert.deepEqual(body, { status, title, message: "what went wrong" });
      assert.deepEqual(Object.keys(body), ["status", "title", "message"]);
    });
  }

  it("has a reason phrase for every status the table can produce", () => {
    for (const [, code] of allCodes) {
      const status = httpStatusOf(code);
      assert.equal(errorBody(status, "m").title, titles.find(([s]) => s === status)?.[1], `title of ${status}`);
      assert.notEqual(reasonPhrase(status), "Error");
    }
  });

  it("keeps the message as given, with no code prefix", () => {
    assert.equal(errorBody(404, "payment intent pi_1 not found").message, "payment intent pi_1 not found");
  });
});
