/**
 * untilAborted settles with work, or rejects with signal's reason as soon as
 * it aborts: a call stops waiting at its deadline even when what it waits for
 * (a request side the client keeps open) never comes. work's own later
 * failure is then nobody's to report.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const aborted = () => {
      work.catch(() => {});
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", aborted, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", aborted);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", aborted);
        reject(error as Error);
      },
    );
  });
}
