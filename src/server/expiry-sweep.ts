import type { Logger } from "../lib/logger.js";
import type { PaymentExpiry } from "../service/payment-expiry.js";

/** ExpirySweep is the background expiry of lapsed intents. */
export interface ExpirySweep {
  /**
   * Sweeps now instead of at the next tick: after the test clock jumped
   * forward, lapsed intents expire within moments. A sweep already running
   * is followed by one more, so nothing that lapsed during it is missed.
   */
  wake(): void;
  /** Stops the timer; a sweep in progress finishes on its own. */
  stop(): void;
}

/**
 * startExpirySweep expires lapsed intents every intervalMs, so an intent
 * nobody reads still ends as expired (and its metric moves) on time. A failed
 * sweep (database down) is logged and tried again next round.
 */
export function startExpirySweep(options: { expiry: PaymentExpiry; intervalMs: number; logger: Logger }): ExpirySweep {
  let running = false;
  let again = false;
  let stopped = false;

  function sweep(): void {
    if (running) {
      again = true;
      return;
    }
    running = true;
    options.expiry
      .sweep()
      .then((count) => {
        if (count > 0) options.logger.info({ expired: count }, "expired lapsed payment intents");
      })
      .catch((error: unknown) => {
        options.logger.error({ err: error instanceof Error ? error.message : String(error) }, "expiry sweep failed");
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
