import { createRequire } from "node:module";
import pino from "pino";
import { createIsoTime } from "../lib/iso-time.js";
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
 * site can log a key, a card number or a full email by mistake.
 *
 * Lines to standard error are written asynchronously and in batches: a line
 * is appended to a buffer, which is written when it holds bufferBytes or at
 * the latest flushIntervalMs later, so a busy server writes a few dozen lines
 * per system call and never waits on its log.
 * flush() writes what is buffered synchronously: the shutdown and a fatal
 * error call it before the process exits, so no line is lost.
 */
/** How much the log buffers before writing, and how long a line may wait in it. */
const bufferBytes = 8 * 1024;
const flushIntervalMs = 100;

export function createPinoLogger(options: PinoLoggerOptions): FlushingLogger {
  const isoTime = createIsoTime();
  let flush = () => {};
  let destination: { write(line: string): void };
  if (options.pretty) {
    // Loaded only for a terminal: a server writing JSON lines (and a test sandbox) starts without it.
    const pretty = createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty");
    destination = pretty({ colorize: true, sync: true, destination: 2, singleLine: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" });
  } else if (options.destination) {
    destination = options.destination;
  } else {
    const stream = pino.destination({ dest: 2, sync: false, minLength: bufferBytes });
    // Written when the buffer fills, and at least every flushIntervalMs: a
    // quiet server's lines do not wait for the next busy moment.
    setInterval(() => stream.flush(), flushIntervalMs).unref();
    destination = stream;
    flush = () => {
      try {
        stream.flushSync();
      } catch {
        // Nothing buffered, or standard error is gone: nothing more can be written.
      }
    };
  }
  const logger = pino(
    {
      level: options.level,
      // pino's isoTime, without Date's costly toISOString.
      timestamp: () => `,"time":"${isoTime(Date.now())}"`,
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
    warn: (fields, message) => logger.warn(fields, message),
    error: (fields, message) => logger.error(fields, message),
    flush,
  };
}

/** A Logger whose buffered lines can be written out before the process exits. */
export interface FlushingLogger extends Logger {
  /** Writes every buffered line synchronously. */
  flush(): void;
}
