import type { Logger } from "../lib/logger.js";
import type { ListeningServer } from "../listener/listen.js";
import type { Readiness } from "../observability/readiness.js";

export interface ShutdownOptions {
  readiness: Pick<Readiness, "beginShutdown">;
  server: Pick<ListeningServer, "close">;
  /** Closes the stores (the database pool) once no request can use them any more. */
  closeStores(): Promise<void>;
  /** How long to keep serving with /readyz at 503 before closing the port. */
  delayMs: number;
  /** Longest requests in flight may take to finish once the port is closed. */
  graceMs: number;
  logger: Logger;
  /** Ends the process; process.exit in production, a spy in tests. */
  exit(code: number): void;
}

/** Shutdown starts a graceful stop; calling it again while one runs forces the exit. */
export type Shutdown = (reason: string) => Promise<void>;

/**
 * createShutdown stops the service without cutting requests off:
 * 1. readiness turns not ready (/readyz 503, gRPC health NOT_SERVING), and
 *    the service keeps serving for delayMs so load balancers notice and stop
 *    sending new traffic;
 * 2. the port closes: new connections are refused, HTTP/2 sessions get
 *    GOAWAY, idle HTTP/1.1 connections close;
 * 3. requests in flight finish, for up to graceMs, then the rest are cut;
 * 4. the stores close and the process exits 0.
 * A second signal during all this exits at once with 1 (an impatient
 * operator's second Ctrl-C), and a watchdog does the same if closing the
 * stores hangs.
 */
export function createShutdown(options: ShutdownOptions): Shutdown {
  let running: Promise<void> | undefined;

  async function stop(reason: string): Promise<void> {
    options.logger.info({ reason, delayMs: options.delayMs, graceMs: options.graceMs }, "shutting down");
    options.readiness.beginShutdown();
    const watchdog = setTimeout(() => {
      options.logger.error({ reason }, "shutdown did not finish in time; exiting");
      options.exit(1);
    }, options.delayMs + options.graceMs + 5_000);
    watchdog.unref();
    try {
      if (options.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      await options.server.close({ graceMs: options.graceMs });
      await options.closeStores();
      options.logger.info({ reason }, "stopped");
      options.exit(0);
    } catch (error) {
      options.logger.error({ reason, err: error instanceof Error ? error.message : String(error) }, "shutdown failed");
      options.exit(1);
    } finally {
      clearTimeout(watchdog);
    }
  }

  return (reason) => {
    if (running) {
      options.logger.error({ reason }, "second stop signal during shutdown; exiting now");
      options.exit(1);
      return running;
    }
    running = stop(reason);
    return running;
  };
}
