/**
 * Logger is the little the service needs from a logger. Passed in, never
 * imported, so tests can capture or silence it.
 */
export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** createJsonLogger writes one JSON object per line. */
export function createJsonLogger(write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const log = (level: string) => (fields: Record<string, unknown>, message: string) => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields })}\n`);
  };
  return { info: log("info"), error: log("error") };
}

/** silentLogger discards everything; for tests that do not look at logs. */
export const silentLogger: Logger = { info() {}, error() {} };
