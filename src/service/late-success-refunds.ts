import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { RefundStore } from "../store/refund-store.js";
import type { LateSuccessHandler } from "./late-success-handler.js";
import { attemptRefOf, type RefundSettler } from "./refund-settler.js";

export interface LateSuccessRefundsDeps {
  refunds: RefundStore;
  settler: RefundSettler;
  clock: Clock;
  ids: Pick<IdGenerator, "refundId">;
  logger: Logger;
  /** As RefundServiceDeps.firstCheckAfterMs. */
  firstCheckAfterMs: number;
  processorTimeoutMs: number;
}

/**
 * createLateSuccessRefunds gives back a payment that succeeded after its
 * intent stopped waiting for it (expired, cancelled, or paid by another
 * attempt): a full refund of that attempt, reason payment_after_close or
 * duplicate_payment, made like a merchant's (refund.created, then
 * refund.succeeded or refund.failed) but not counted in the intent's
 * amountRefunded, which is about the payment that paid it. One automatic
 * refund per attempt, so a second call for it changes nothing.
 */
export function createLateSuccessRefunds(deps: LateSuccessRefundsDeps): LateSuccessHandler {
  return {
    async onLateSuccess(intent, attempt, reason) {
      const reservation = await deps.refunds.reserve(intent.merchantId, intent.id, { automaticFor: attempt.id }, (_current, existing) => {
        if (existing) return null;
        const now = deps.clock.now();
        return {
          id: deps.ids.refundId(intent.livemode),
          merchantId: intent.merchantId,
          livemode: intent.livemode,
          paymentIntentId: intent.id,
          attemptId: attempt.id,
          amount: attempt.amount,
          status: "pending",
          reason,
          clientReference: null,
          requestFingerprint: null,
          failureReason: null,
          // The processor the late attempt was made with refunds it.
          processor: attempt.processor,
          processorReference: null,
          createdAt: now,
          updatedAt: now,
          checkAfter: new Date(now.getTime() + deps.firstCheckAfterMs),
          meta: [],
        };
      });
      if (!reservation?.reserved) return;
      deps.logger.error(
        { paymentIntent: intent.id, attempt: attempt.id, refund: reservation.refund.id, reason },
        "a payment succeeded after its payment intent stopped waiting for it: it is refunded automatically",
      );
      await deps.settler.ask(reservation.refund, attemptRefOf(attempt), AbortSignal.timeout(deps.processorTimeoutMs));
    },
  };
}
