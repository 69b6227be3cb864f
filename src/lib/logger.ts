/**
 * Logger is the little the service needs from a logger. Passed in, never
 * imported, so tests can capture or silence it. The server's implementation
 * is pino-backed and redacts secrets (src/observability/pino-logger.ts).
 */
export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  /** Something an operator should look at, though the service runs on (test helpers on a public address). */
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** silentLogger discards everything; for tests that do not look at logs. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
