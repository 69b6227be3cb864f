/**
 * Clock is where the service reads the time, so tests can freeze or move it.
 */
export interface Clock {
  now(): Date;
}

/** createSystemClock reads the machine's wall clock. */
export function createSystemClock(): Clock {
  return { now: () => new Date() };
}
