import type { Clock } from "../lib/clock.js";
import type { EventStore } from "../store/event-store.js";

/** EventRetention deletes events past their retention, in rounds the sweep runs. */
export interface EventRetention {
  /** Deletes what is due now; resolves to how many events went. */
  sweep(): Promise<number>;
}

export interface EventRetentionOptions {
  events: Pick<EventStore, "deleteRecordedBefore">;
  clock: Clock;
  /** EVENT_RETENTION_DAYS. */
  retentionDays: number;
  /** Events deleted per statement, so one round never holds many rows locked at once. */
  batchSize?: number;
  /** At most this many per round; the rest wait for the next round. */
  maxPerRound?: number;
}

const dayMs = 86_400_000;

/**
 * createEventRetention keeps events for retentionDays of the service's clock
 * (README, Webhooks: at least 30 days), then deletes them with their ended
 * deliveries, in batches, oldest first. An event whose redelivery is still
 * being retried stays until that delivery ends.
 */
export function createEventRetention(options: EventRetentionOptions): EventRetention {
  const batchSize = options.batchSize ?? 1000;
  const maxPerRound = options.maxPerRound ?? 100_000;
  return {
    async sweep() {
      const before = new Date(options.clock.now().getTime() - options.retentionDays * dayMs);
      let deleted = 0;
      while (deleted < maxPerRound) {
        const batch = await options.events.deleteRecordedBefore(before, Math.min(batchSize, maxPerRound - deleted));
        deleted += batch;
        if (batch < batchSize) break;
      }
      return deleted;
    },
  };
}
