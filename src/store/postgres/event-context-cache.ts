import type { PaymentIntentRecord } from "../../domain/payment-intent.js";
import type { SettlementAccountRecord } from "../../domain/settlement-account.js";
import { createBoundedTtlCache } from "./bounded-ttl-cache.js";
import type { EventContext } from "./event-sql.js";

/**
 * EventContextCache remembers what the outbox's context reads found (the
 * merchants' enabled endpoints, their earliest settlement account, accounts
 * by id), so that a create can render its event before it is sent and be one
 * statement: it checks that the context still holds (creation-sql.ts) and
 * writes nothing when it does not, and the store then creates again the
 * long way. Settlement accounts never change once registered, so a
 * remembered one is only ever not the one a list item would show (the
 * earliest of a merchant that registered an earlier-dated one since), which
 * that check catches as well.
 */
export interface EventContextCache {
  /** The context a creation of record would read, if everything it needs is remembered. */
  forCreation(record: PaymentIntentRecord): EventContext | undefined;
  /** Remembers what a context read found for intent. */
  learn(intent: PaymentIntentRecord, context: EventContext): void;
  /** Forgets a merchant's endpoints and earliest account (the check failed). */
  forget(merchantId: string): void;
}

export interface EventContextCacheOptions {
  /** How long an entry is used; the check makes a stale one cost a second create, not a wrong event. */
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/** Endpoints and the earliest account are remembered per merchant and mode: an intent sees only its mode's. */
const modeKey = (intent: { merchantId: string; livemode: boolean }) => `${intent.merchantId}\u0000${intent.livemode}`;

export function createEventContextCache(options: EventContextCacheOptions = {}): EventContextCache {
  const settings = { ttlMs: options.ttlMs ?? 60_000, maxEntries: options.maxEntries ?? 10_000, now: options.now ?? (() => performance.now()) };
  const endpoints = createBoundedTtlCache<EventContext["endpoints"]>(settings);
  /** Merchant → its earliest account's id, null when it has none. */
  const earliest = createBoundedTtlCache<string | null>(settings);
  const accounts = createBoundedTtlCache<SettlementAccountRecord>(settings);

  return {
    forCreation(record) {
      const known = endpoints.get(modeKey(record));
      if (!known) return undefined;
      const accountId = record.splits[0]?.settlementAccountId ?? earliest.get(modeKey(record));
      if (accountId === undefined) return undefined;
      if (accountId === null) return { account: null, endpoints: known };
      const account = accounts.get(accountId);
      return account && { account, endpoints: known };
    },
    learn(intent, context) {
      endpoints.set(modeKey(intent), context.endpoints);
      if (context.account) accounts.set(context.account.id, context.account);
      if (intent.splits.length === 0) earliest.set(modeKey(intent), context.account?.id ?? null);
    },
    forget(merchantId) {
      for (const livemode of [false, true]) {
        endpoints.delete(modeKey({ merchantId, livemode }));
        earliest.delete(modeKey({ merchantId, livemode }));
      }
    },
  };
}
