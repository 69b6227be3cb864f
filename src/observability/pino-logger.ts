import pino from "pino";
import pretty from "pino-pretty";
import type { Logger } from "../lib/logger.js";
import type { LogLevel } from "./log-level.js";
import { redactFields, redactText } from "./redact.js";

export interface PinoLoggerOptions {
  level: LogLevel;
  /** Human-readable lines (pino-pretty) instead of JSON: for a terminal. */
  pretty?: boolean;
  /** Where lines go; standard error by default, so standard output stays free for the CLI banner. */
  destination?: { write(line: string): void };
}

/**
 * createPinoLogger implements the Logger port with pino: one JSON object per
 * line with an ISO time and a level name. Redaction (see redact.ts) is part of
 * the pino instance itself, on every field and on the message, so no call
 * site can log a key, a card number or a full email by mistake. Writes are
 * synchronous: the last lines before process.exit must not be lost.
 */
export function createPinoLogger(options: PinoLoggerOptions): Logger {
  const destination = options.pretty
    ? pretty({ colorize: true, sync: true, destination: 2, singleLine: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" })
    : (options.destination ?? pino.destination({ dest: 2, sync: true }));
  const logger = pino(
    {
      level: options.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => redactFields(fields),
      },
      hooks: {
        logMethod(args, method) {
          const masked = args.map((arg) => (typeof arg === "string" ? redactText(arg) : arg));
          method.apply(this, masked as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
  return {
    info: (fields, message) => logger.info(fields, message),
    error: (fields, message) => logger.error(fields, message),
  };
}
