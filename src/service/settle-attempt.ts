import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { AttemptOutcome } from "../processor/payment-processor.js";
import type { LateSuccessReason } from "./late-success-handler.js";

/** AttemptKey names one attempt of one merchant. */
export interface AttemptKey {
  merchantId: string;
  attemptId: string;
}

/** Which path brought an outcome: logged with it, and what decides nothing. */
export type SettleSource = "checkout" | "return" | "webhook" | "reconciler" | "test_helper";

/** SettleOptions: where the outcome came from, and the reconciler's lease (a stale one changes nothing). */
export interface SettleOptions {
  source: SettleSource;
  leaseToken?: string;
}

/** What a settlement did: the attempt and its intent as they are now, and whether this call changed them. */
export interface SettleResult {
  intent: PaymentIntentRecord;
  attempt: PaymentAttemptRecord;
  changed: boolean;
  /** Set when this call recorded a late success (handed to the LateSuccessHandler). */
  lateSuccess?: LateSuccessReason;
}

/**
 * SettleAttempt is the one function every path that learns an attempt's
 * outcome calls: the checkout after begin, the return URL, the processor's
 * webhook, the reconciler and the test helpers. It commits the outcome once,
 * in a short transaction of its own, whichever path brings it first; a
 * repeated or late message never undoes a final state. undefined: no such
 * attempt.
 */
export type SettleAttempt = (key: AttemptKey, outcome: AttemptOutcome, options: SettleOptions) => Promise<SettleResult | undefined>;
