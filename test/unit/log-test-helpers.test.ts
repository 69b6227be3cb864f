import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readConfig } from "../../src/config.js";
import type { Logger } from "../../src/lib/logger.js";
import { isLoopback } from "../../src/lib/is-loopback.js";
import { logTestHelpers } from "../../src/sandbox/log-test-helpers.js";

describe("isLoopback", () => {
  it("knows the addresses only this machine reaches", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", "::ffff:127.0.0.1"]) assert.equal(isLoopback(host), true, host);
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.10", "::ffff:10.0.0.1", "example.com", "128.0.0.1"]) assert.equal(isLoopback(host), false, host);
  });
});

describe("logTestHelpers", () => {
  function capture() {
    const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const logger: Logger = {
      info: (fields, message) => void lines.push({ level: "info", fields, message }),
      warn: (fields, message) => void lines.push({ level: "warn", fields, message }),
      error: (fields, message) => void lines.push({ level: "error", fields, message }),
    };
    return { logger, lines };
  }

  it("says so at info level on a loopback address", () => {
    const { logger, lines } = capture();
    logTestHelpers(logger, readConfig({ TEST_CLOCK: "true" }));
    assert.deepEqual(lines, [
      {
        level: "info",
        fields: { testHelpers: true, testClock: true, host: "127.0.0.1" },
        message: "test helpers are on (/v1/v2/test-helpers/…): a sandbox, not for production",
      },
    ]);
  });

  it("warns on any other address", () => {
    const { logger, lines } = capture();
    logTestHelpers(logger, readConfig({ HOST: "0.0.0.0", BASE_PATH: "" }));
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.level, "warn");
    assert.deepEqual(lines[0]!.fields, { testHelpers: true, testClock: false, host: "0.0.0.0" });
    assert.equal(
      lines[0]!.message,
      "test helpers are on (/v2/test-helpers/…) and HOST 0.0.0.0 is not a loopback address: anyone who reaches this port can create merchants and decide payment outcomes; set TEST_HELPERS=false unless this is a sandbox",
    );
  });
});
