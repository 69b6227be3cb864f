/** Settled is how a promise ended within the time allowed, or that it had not. */
export type Settled<T> = { status: "fulfilled"; value: T } | { status: "rejected"; reason: unknown } | { status: "late" };

/**
 * settleWithin waits for promise at most ms, counting only time this process
 * could have spent reading the answer. When the event loop was held up past
 * the deadline, a plain timer can fire before pending I/O is read (the loop
 * runs expired timers before it next polls), so a stalled or CPU-starved
 * process would blame a Redis that had answered long ago; the deadline is
 * therefore checked in a setImmediate (the check phase, after the poll),
 * once whatever had arrived has been read.
 */
export function settleWithin<T>(promise: Promise<T>, ms: number): Promise<Settled<T>> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: Settled<T>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => setImmediate(() => finish({ status: "late" })), ms);
    promise.then(
      (value) => finish({ status: "fulfilled", value }),
      (reason: unknown) => finish({ status: "rejected", reason }),
    );
  });
}
