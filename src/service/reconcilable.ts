/**
 * Reconcilable is one kind of work the reconciler runs on every tick: payment
 * attempts whose outcome is not known yet (attempt-reconciler.ts), and,
 * plugged in beside them, pending refunds. runOnce claims what is due at now
 * (leased and fenced across instances), asks the processor, settles, and
 * resolves to how many it handled; it stops early when signal aborts (the
 * service is stopping).
 */
export interface Reconcilable {
  name: string;
  runOnce(now: Date, signal: AbortSignal): Promise<number>;
}
