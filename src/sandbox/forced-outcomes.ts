import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import type { PaymentAttemptOutcome } from "../domain/payment-attempt.js";
import type { ChargingProcessor as PaymentProcessor } from "../processor/test-mode-processor.js";

/**
 * ForcedOutcomes lets the test helpers pay through the checkout service
 * itself, so an attempt made by a helper takes exactly the customer's path
 * (lock, state machine, attempt record, events) and only the processor's
 * answer is the one the test asked for.
 */
export interface ForcedOutcomes {
  /** The processor to give the checkout service: the real one, except for charges made inside run(). */
  readonly processor: PaymentProcessor;
  /** Runs work with every charge it makes answered with outcome, without calling the real processor. */
  run<T>(outcome: PaymentAttemptOutcome, work: () => Promise<T>): Promise<T>;
}

/**
 * createForcedOutcomes wraps processor. The outcome travels with the async
 * call (AsyncLocalStorage), not in shared state: a customer paying the same
 * intent at the same moment, or another helper call, is charged as it would
 * be otherwise. A forced charge never reaches the real processor, so no money
 * moves whatever processor is configured.
 */
export function createForcedOutcomes(processor: PaymentProcessor): ForcedOutcomes {
  const forced = new AsyncLocalStorage<PaymentAttemptOutcome>();
  return {
    processor: {
      name: processor.name,
      testMode: processor.testMode,
      instructions: (paymentIntentId, method) => processor.instructions(paymentIntentId, method),
      async charge(request) {
        const outcome = forced.getStore();
        if (outcome === undefined) return processor.charge(request);
        const reference = `txn_test_${randomBytes(12).toString("hex")}`;
        return outcome === "succeeded" ? { outcome, reference } : { outcome, reference, declineReason: "Declined by a test helper." };
      },
    },
    run: (outcome, work) => forced.run(outcome, work),
  };
}
