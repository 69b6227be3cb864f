import type { Clock } from "../lib/clock.js";

/** How often at most a key's lastUsedAt is written (issue 23, §2: never a write per request). */
export const lastUsedFlushMs = 60_000;

export interface KeyUsageOptions {
  clock: Clock;
  /** Writes a key's lastUsedAt (the key store's markUsed). */
  write(merchantId: string, keyId: string, at: Date): Promise<void>;
  /** Told when a write fails: a lost lastUsedAt is not worth a failed request. */
  onError(error: unknown): void;
  /** Default lastUsedFlushMs. */
  intervalMs?: number;
}

/** KeyUsage records that a key was used, writing at most once per interval per key on this instance. */
export interface KeyUsage {
  used(merchantId: string, keyId: string): void;
}

/**
 * createKeyUsage keeps, per key, when this instance last wrote its
 * lastUsedAt; a use within the interval after that writes nothing, a later
 * one writes in the background (the request never waits for it). Entries
 * older than the interval are dropped as the map grows, so it holds at most
 * the keys used within one interval.
 */
export function createKeyUsage(options: KeyUsageOptions): KeyUsage {
  const intervalMs = options.intervalMs ?? lastUsedFlushMs;
  const flushed = new Map<string, number>();
  let nextPruneAt = 0;
  return {
    used(merchantId, keyId) {
      const at = options.clock.now();
      const now = at.getTime();
      const last = flushed.get(keyId);
      if (last !== undefined && now - last < intervalMs) return;
      flushed.set(keyId, now);
      if (now >= nextPruneAt) {
        nextPruneAt = now + intervalMs;
        for (const [id, time] of flushed) if (now - time >= intervalMs && id !== keyId) flushed.delete(id);
      }
      options.write(merchantId, keyId, at).catch(options.onError);
    },
  };
}
