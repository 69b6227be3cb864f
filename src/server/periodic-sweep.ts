import type { Logger } from "../lib/logger.js";

/** PeriodicSweep is background work done in rounds: the expiry of lapsed intents, the retention of events. */
export interface PeriodicSweep {
  /**
   * Sweeps now instead of at the next tick: after the test clock jumped
   * forward, what fell due is handled within moments. A round already running
   * is followed by one more, so nothing that fell due during it is missed.
   */
  wake(): void;
  /** Stops the timer; a round in progress finishes on its own. */
  stop(): void;
}

export interface PeriodicSweepOptions {
  /** One round; resolves to how many things it handled. */
  run: () => Promise<number>;
  intervalMs: number;
  logger: Logger;
  /** The log line of a round that handled something: its fields and message. */
  done: (count: number) => [Record<string, unknown>, string];
  /** The message of a round that failed. */
  failed: string;
}

/**
 * startPeriodicSweep runs a round every intervalMs and on wake(), never two
 * at once. A failed round (database down) is logged and tried again next
 * round.
 */
export function startPeriodicSweep(options: PeriodicSweepOptions): PeriodicSweep {
  let running = false;
  let again = false;
  let stopped = false;

  function sweep(): void {
    if (running) {
      again = true;
      return;
    }
    running = true;
    options
      .run()
      .then((count) => {
        if (count > 0) options.logger.info(...options.done(count));
      })
      .catch((error: unknown) => {
        options.logger.error({ err: error instanceof Error ? error.message : String(error) }, options.failed);
      })
      .finally(() => {
        running = false;
        if (again && !stopped) {
          again = false;
          sweep();
        }
      });
  }

  const timer = setInterval(sweep, options.intervalMs);
  timer.unref();
  return {
    wake() {
      if (!stopped) sweep();
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
