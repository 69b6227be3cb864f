import type { Logger } from "../lib/logger.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { RefundStore } from "../store/refund-store.js";
import type { Reconcilable } from "./reconcilable.js";
import { attemptRefOf, type RefundSettler } from "./refund-settler.js";

export interface RefundReconcilerDeps {
  refunds: RefundStore;
  intents: PaymentIntentStore;
  settler: RefundSettler;
  logger: Logger;
  /** Most refunds claimed per round; default 32. */
  batchSize?: number;
  /** Processor calls in flight at once; default 8. */
  concurrency?: number;
  /** Bounds each processor call; an answer that does not come in time is unknown, and asked again later. */
  processorTimeoutMs: number;
}

const defaultBatchSize = 32;
const defaultConcurrency = 8;

/**
 * createRefundReconciler settles refunds left pending: the processor
 * answered "pending" (it confirms later), or its answer never came (a
 * timeout, an outage, a crash between the reservation and the answer). Each
 * round claims the refunds due, leased and fenced across instances, asks the
 * processor about each (refund() again while it has given no reference: the
 * refund id is the idempotency key, so it never refunds twice) and settles or
 * postpones each through the settler. A refund settles exactly once, however
 * many instances, webhooks and requests learn its outcome.
 */
export function createRefundReconciler(deps: RefundReconcilerDeps): Reconcilable {
  const batchSize = deps.batchSize ?? defaultBatchSize;
  const concurrency = deps.concurrency ?? defaultConcurrency;
  return {
    name: "refunds",
    async runOnce(now, signal) {
      // A claim outlasts the round's processor calls, so only a hung instance's claims pass to another.
      const leaseMs = (Math.ceil(batchSize / concurrency) + 1) * deps.processorTimeoutMs;
      const claimed = await deps.refunds.claimDue(now, batchSize, leaseMs);
      let settled = 0;
      // A few processor calls at a time: a slow processor delays a round, never one refund's claim past its lease.
      for (let start = 0; start < claimed.length && !signal.aborted; start += concurrency) {
        const wave = claimed.slice(start, start + concurrency).map(async ({ refund, leaseToken }) => {
          const attempt = (await deps.intents.listAttempts(refund.merchantId, refund.paymentIntentId)).find((a) => a.id === refund.attemptId);
          if (!attempt) {
            deps.logger.error({ refund: refund.id, attempt: refund.attemptId }, "a pending refund's payment attempt is missing: it cannot be reconciled");
            return;
          }
          const timeout = AbortSignal.any([signal, AbortSignal.timeout(deps.processorTimeoutMs)]);
          const after = await deps.settler.ask(refund, attemptRefOf(attempt), timeout, leaseToken);
          if (after.status !== "pending") settled += 1;
        });
        await Promise.all(wave);
      }
      return settled;
    },
  };
}
