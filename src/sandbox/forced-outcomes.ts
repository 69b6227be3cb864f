import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import type { AttemptOutcome, PaymentProcessor } from "../processor/payment-processor.js";
import { createProcessorRegistry, type ProcessorRegistry } from "../processor/processor-registry.js";

/** What a test helper asks the processor to answer: a final outcome, or "processing" (pending: settled later). */
export type ForcedOutcome = "succeeded" | "declined" | "processing";

/**
 * ForcedOutcomes lets the test helpers pay through the checkout service
 * itself, so an attempt made by a helper takes exactly the customer's path
 * (begin, state machine, attempt record, settlement, events) and only the
 * processor's answer is the one the test asked for.
 */
export interface ForcedOutcomes {
  /** The processors to give the checkout service: the real ones, except for attempts begun inside run(). */
  readonly processors: ProcessorRegistry;
  /** Runs work with every attempt it begins answered with outcome, without calling the real processor. */
  run<T>(outcome: ForcedOutcome, work: () => Promise<T>): Promise<T>;
  /** Whether an attempt key was begun by a helper (its status and settlement are the helper's too). */
  forced(idempotencyKey: string): boolean;
}

/**
 * createForcedOutcomes wraps every processor of the registry. The outcome travels with the async
 * call (AsyncLocalStorage), not in shared state: a customer paying the same
 * intent at the same moment, or another helper call, is charged as it would
 * be otherwise. A forced attempt never reaches the real processor, so no
 * money moves whatever processor is configured; its status stays pending
 * until a helper settles it.
 */
export function createForcedOutcomes(registry: ProcessorRegistry): ForcedOutcomes {
  const forced = new AsyncLocalStorage<ForcedOutcome>();
  const keys = new Set<string>();
  const wrap = (processor: PaymentProcessor): PaymentProcessor => ({
    name: processor.name,
    testMode: processor.testMode,
    handles: (method) => processor.handles(method),
    instructions: (intent, method) => processor.instructions(intent, method),
    async begin(request, signal): Promise<AttemptOutcome> {
      const outcome = forced.getStore();
      if (outcome === undefined) return processor.begin(request, signal);
      keys.add(request.idempotencyKey);
      const reference = `txn_test_${randomBytes(12).toString("hex")}`;
      switch (outcome) {
        case "succeeded":
          return { kind: "succeeded", reference, amount: request.amount, currency: request.currency };
        case "declined":
          return { kind: "declined", reference, reason: "Declined by a test helper." };
        case "processing":
          return { kind: "pending", reference };
      }
    },
    async status(ref, signal) {
      if (keys.has(ref.idempotencyKey)) return ref.reference ? { kind: "pending", reference: ref.reference } : { kind: "unknown", reason: "a test helper's attempt" };
      return processor.status(ref, signal);
    },
    parseWebhook: (headers, body) => processor.parseWebhook(headers, body),
    refund: (request, signal) => processor.refund(request, signal),
    refundStatus: (ref, signal) => processor.refundStatus(ref, signal),
  });
  return {
    processors: createProcessorRegistry(registry.processors.map(wrap)),
    run: (outcome, work) => forced.run(outcome, work),
    forced: (idempotencyKey) => keys.has(idempotencyKey),
  };
}
