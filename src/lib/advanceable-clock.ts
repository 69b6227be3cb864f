import type { Clock } from "./clock.js";

/**
 * AdvanceableClock is the test clock (TEST_CLOCK=true): it reads the time of
 * the clock beneath it plus every advance so far, and never goes back. Real
 * time keeps passing, so timeouts and retries behave as they do in
 * production; advance() jumps ahead, so a suite need not wait for a
 * 24-hour expiry or a 30-minute retry.
 */
export interface AdvanceableClock extends Clock {
  /** Moves the clock forward by ms (a positive number) and returns the new time. */
  advance(ms: number): Date;
  /**
   * Calls listener after every advance, so work scheduled by time (the
   * expiry sweep, retries) can look again at once rather than at its next
   * tick. Returns a function that removes the listener.
   */
  onAdvance(listener: (now: Date) => void): () => void;
}

/**
 * createAdvanceableClock starts at the base clock's time (the system clock in
 * the service). If the base clock steps back (an NTP correction), the time
 * holds still until the base catches up: timestamps never decrease.
 */
export function createAdvanceableClock(base: Clock): AdvanceableClock {
  let offsetMs = 0;
  let latestMs = -Infinity;
  const listeners = new Set<(now: Date) => void>();

  function nowMs(): number {
    latestMs = Math.max(latestMs, base.now().getTime() + offsetMs);
    return latestMs;
  }

  return {
    now: () => new Date(nowMs()),
    advance(ms) {
      if (!(Number.isFinite(ms) && ms > 0)) throw new RangeError(`advance takes a positive number of milliseconds, not ${ms}`);
      // The new time is ms past the latest time read, even if the base stepped back.
      const before = nowMs();
      offsetMs += ms;
      latestMs = Math.max(before + ms, nowMs());
      const now = new Date(latestMs);
      for (const listener of listeners) listener(now);
      return now;
    },
    onAdvance(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
