/**
 * Reconcilable is one kind of work the reconciler does in each of its rounds
 * (attempts in processing, refunds pending): claim what is due, leased and
 * fenced across instances, ask the processor, settle. runOnce answers how
 * many it settled or looked at; signal aborts when the service stops.
 */
export interface Reconcilable { name: string; runOnce(now: Date, signal: AbortSignal): Promise<number> }
