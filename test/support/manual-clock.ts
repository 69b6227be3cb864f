import type { Clock } from "../../src/lib/clock.js";

/** ManualClock is a Clock that only moves when a test moves it. */
export interface ManualClock extends Clock {
  set(time: string | Date): void;
  advance(ms: number): void;
  /** The current time as the API renders it (RFC 3339 UTC with milliseconds). */
  iso(): string;
}

/** createManualClock starts at start and stays there until set or advanced. */
export function createManualClock(start: string | Date = "2025-01-02T03:04:05.000Z"): ManualClock {
  let now = new Date(start).getTime();
  return {
    now: () => new Date(now),
    set(time) {
      now = new Date(time).getTime();
    },
    advance(ms) {
      now += ms;
    },
    iso: () => new Date(now).toISOString(),
  };
}
