import type { PaymentProcessor } from "./payment-processor.js";

/**
 * ProcessorRegistry is the one answer to "which processor": for a new
 * attempt, the processor that collects its payment method; for everything
 * after (status checks, the processor's webhooks, refunds), the processor
 * named on the attempt or refund, the one that took the money.
 */
export interface ProcessorRegistry {
  /** The processor that collects method (the first, in order, that handles it); undefined when none here does. */
  forMethod(method: string): PaymentProcessor | undefined;
  /** The processor of that name, as stored on attempts and refunds; undefined when it is not configured here. */
  get(name: string): PaymentProcessor | undefined;
  /** Every processor, in the order methods are matched. */
  readonly processors: readonly PaymentProcessor[];
}

/**
 * createProcessorRegistry: processors in the order their methods are
 * matched, the specific before the catch-all (Paystack, which handles only
 * "paystack", before the test-mode processor, which handles every method).
 * Names are unique: an attempt's stored name must find one processor.
 */
export function createProcessorRegistry(processors: readonly PaymentProcessor[]): ProcessorRegistry {
  const byName = new Map<string, PaymentProcessor>();
  for (const processor of processors) {
    if (byName.has(processor.name)) throw new Error(`two payment processors are named "${processor.name}"`);
    byName.set(processor.name, processor);
  }
  const list = [...processors];
  return {
    forMethod: (method) => list.find((processor) => processor.handles(method)),
    get: (name) => byName.get(name),
    processors: list,
  };
}
