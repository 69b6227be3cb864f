import type { Logger } from "../../../src/lib/logger.js";
import { createPinoLogger } from "../../../src/observability/pino-logger.js";

/** LogLine is one parsed JSON log line. */
export type LogLine = Record<string, unknown>;

export interface CapturedLogs {
  /** The real pino-backed logger (with its redaction), writing into memory. */
  logger: Logger;
  /** Every line written so far, parsed. */
  lines(): LogLine[];
  /** Everything written so far, raw: what a secret must never appear in. */
  text(): string;
  /** The request log lines (msg "request"). */
  requests(): LogLine[];
}

/** captureLogs builds the production logger over an in-memory destination. */
export function captureLogs(): CapturedLogs {
  const raw: string[] = [];
  const logger = createPinoLogger({ level: "info", destination: { write: (line) => void raw.push(line) } });
  const lines = () => raw.join("").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as LogLine);
  return {
    logger,
    lines,
    text: () => raw.join(""),
    requests: () => lines().filter((line) => line["msg"] === "request"),
  };
}

/** waitForLine polls until a line matching predicate was written (request lines follow the response). */
export async function waitForLine(logs: CapturedLogs, predicate: (line: LogLine) => boolean): Promise<LogLine> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const line = logs.lines().find(predicate);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no matching log line in:\n${logs.text()}`);
}
