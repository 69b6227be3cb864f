import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { Clock } from "../lib/clock.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { PaymentEvents } from "./payment-events.js";

/**
 * PaymentExpiry moves pending intents past their expiresAt to expired. It runs
 * on read (an intent is never shown pending after its deadline) and from a
 * periodic sweep (so lists filtered by status and metrics stay right even for
 * intents nobody reads).
 */
export interface PaymentExpiry {
  /** The record as it stands now: a lapsed pending intent is expired first. */
  settle(record: PaymentIntentRecord): Promise<PaymentIntentRecord>;
  /** Expires every lapsed intent, in batches; returns how many. */
  sweep(): Promise<number>;
}

export function isLapsed(record: PaymentIntentRecord, now: Date): boolean {
  return record.status === "pending" && record.expiresAt.getTime() <= now.getTime();
}

/** createPaymentExpiry wires expiry to its store, clock and observer. */
export function createPaymentExpiry(deps: { intents: PaymentIntentStore; clock: Clock; events: PaymentEvents }): PaymentExpiry {
  const batch = 500;
  return {
    async settle(record) {
      const now = deps.clock.now();
      if (!isLapsed(record, now)) return record;
      const expired = await deps.intents.transition(record.merchantId, record.id, { from: "pending", to: "expired", at: now });
      if (expired) {
        deps.events.transitioned(record.merchantId, record.id, "pending", "expired");
        return expired;
      }
      // Something else moved it first (paid, deleted, another sweep): read what it is now.
      return (await deps.intents.findById(record.merchantId, record.id)) ?? record;
    },

    async sweep() {
      let total = 0;
      // Bounded: a backlog is worked off in batches, never in one huge statement.
      for (let round = 0; round < 100; round++) {
        const expired = await deps.intents.expireDue(deps.clock.now(), batch);
        for (const record of expired) deps.events.transitioned(record.merchantId, record.id, "pending", "expired");
        total += expired.length;
        if (expired.length < batch) break;
      }
      return total;
    },
  };
}
