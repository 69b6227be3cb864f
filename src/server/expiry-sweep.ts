import type { Logger } from "../lib/logger.js";
import type { PaymentExpiry } from "../service/payment-expiry.js";

/**
 * startExpirySweep expires lapsed intents every intervalMs, so an intent
 * nobody reads still ends as expired (and its metric moves) on time. A failed
 * sweep (database down) is logged and tried again next round. Returns stop().
 */
export function startExpirySweep(options: { expiry: PaymentExpiry; intervalMs: number; logger: Logger }): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
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
      });
  }, options.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
