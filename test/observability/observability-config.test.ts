import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, readConfig } from "../../src/config.js";
import { createPinoLogger } from "../../src/observability/pino-logger.js";

/** The one-line message readConfig refuses env with. */
function refusal(env: Record<string, string>): string {
  try {
    readConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  return assert.fail("readConfig accepted the environment");
}

describe("readConfig: LOG_LEVEL and METRICS_TOKEN", () => {
  it("defaults to level info and an open /metrics", () => {
    const config = readConfig({});
    assert.equal(config.logLevel, "info");
    assert.equal(config.metricsToken, undefined);
    assert.equal(readConfig({ LOG_LEVEL: "", METRICS_TOKEN: "" }).logLevel, "info");
  });

  it("accepts every pino level and silent", () => {
    for (const level of ["fatal", "error", "warn", "info", "debug", "trace", "silent"]) {
      assert.equal(readConfig({ LOG_LEVEL: level }).logLevel, level);
    }
  });

  it("refuses another level, naming the variable, the value and the allowed values", () => {
    assert.equal(refusal({ LOG_LEVEL: "loud" }), 'LOG_LEVEL="loud" is not valid: one of fatal, error, warn, info, debug, trace, silent');
    assert.match(refusal({ LOG_LEVEL: "INFO" }), /^LOG_LEVEL="INFO" is not valid/);
  });

  it("reads METRICS_TOKEN and refuses a weak one without echoing it", () => {
    assert.equal(readConfig({ METRICS_TOKEN: "scrape-token-0123456789" }).metricsToken, "scrape-token-0123456789");
    for (const token of ["short", "has space in it 0123456789", "comma,in,it,0123456789"]) {
      const message = refusal({ METRICS_TOKEN: token });
      assert.equal(message, 'METRICS_TOKEN="…" is not valid: 16-256 printable characters without spaces or commas');
      assert.ok(!message.includes(token));
    }
  });
});

describe("createPinoLogger", () => {
  it("writes nothing below its level", () => {
    const lines: string[] = [];
    const logger = createPinoLogger({ level: "error", destination: { write: (line) => void lines.push(line) } });
    logger.info({ n: 1 }, "quiet");
    logger.error({ n: 2 }, "loud");
    assert.deepEqual(
      lines.map((line) => (JSON.parse(line) as { msg: string }).msg),
      ["loud"],
    );
    const silent: string[] = [];
    createPinoLogger({ level: "silent", destination: { write: (line) => void silent.push(line) } }).error({}, "x");
    assert.deepEqual(silent, []);
  });
});
