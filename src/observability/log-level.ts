/** The levels LOG_LEVEL accepts, most to least severe (pino's names); "silent" logs nothing. */
export const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** LogLevel is the least severe level a logger writes. */
export type LogLevel = (typeof logLevels)[number];

/** isLogLevel tells whether LOG_LEVEL's value names a level. */
export function isLogLevel(value: string): value is LogLevel {
  return (logLevels as readonly string[]).includes(value);
}
