/**
 * watchParent calls onGone once when parent, the process that started this
 * one (process.ppid read at start, before anything slow, so a wrapper killed
 * during start-up is noticed too), has exited: this process was handed to
 * another. It checks every intervalMs without keeping the event loop alive.
 *
 * Why: `npx payment-intents serve` runs the server under `sh -c`, under npm.
 * A `kill <pid>` of what a shell's `&` reported ends npm and the shell, never
 * the server, which keeps the port. Under npm the wrapper's end is the
 * signal to stop.
 */
export function watchParent(parent: number, onGone: () => void, intervalMs = 250): () => void {
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
