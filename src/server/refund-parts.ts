import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { LateSuccessHandler } from "../service/late-success-handler.js";
import { createLateSuccessRefunds } from "../service/late-success-refunds.js";
import type { PageTokenCodec } from "../service/page-token.js";
import type { Reconcilable } from "../service/reconcilable.js";
import type { RefundNoticeHandler } from "../service/refund-notice-handler.js";
import { createRefundNotices } from "../service/refund-notices.js";
import { createRefundReconciler } from "../service/refund-reconciler.js";
import { createRefundService, type RefundService } from "../service/refund-service.js";
import { createRefundSettler, type RefundingProcessors } from "../service/refund-settler.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { RefundStore } from "../store/refund-store.js";

/** The longest the service waits for one processor call by default (PROCESSOR_TIMEOUT_MS). */
export const defaultProcessorTimeoutMs = 10_000;

/** RefundParts is everything refunds need, over one store and the processors, for the app and the background work. */
export interface RefundParts {
  /** The API's RefundService, with the app's page tokens. */
  service(pageTokens: PageTokenCodec): RefundService;
  /** Pending refunds, for the reconciler's rounds. */
  reconciler: Reconcilable;
  /** Refunds a payment that succeeded after its intent stopped waiting for it. */
  lateSuccess: LateSuccessHandler;
  /** Settles refunds from the processor's verified webhook notices. */
  notices: RefundNoticeHandler;
}

export interface RefundPartsOptions {
  refunds: RefundStore;
  intents: PaymentIntentStore;
  /** The processors by name (the registry): a refund goes back through the processor that took its payment. */
  processors: RefundingProcessors;
  clock: Clock;
  ids: Pick<IdGenerator, "refundId">;
  logger: Logger;
  /** PROCESSOR_TIMEOUT_MS; default 10 s. */
  processorTimeoutMs?: number;
}

/**
 * createRefundParts builds the refund service, its settler and what runs
 * beside it. A new refund is first asked about by the request that made it;
 * the reconciler may ask once that request's processor call has had its
 * time and 30 s more.
 */
export function createRefundParts(options: RefundPartsOptions): RefundParts {
  const { refunds, intents, processors, clock, ids, logger } = options;
  const processorTimeoutMs = options.processorTimeoutMs ?? defaultProcessorTimeoutMs;
  const firstCheckAfterMs = processorTimeoutMs + 30_000;
  const settler = createRefundSettler({ refunds, processors, clock, logger });
  return {
    service: (pageTokens) =>
      createRefundService({ intents, refunds, settler, pageTokens, clock, ids, firstCheckAfterMs, processorTimeoutMs }),
    reconciler: createRefundReconciler({ refunds, intents, settler, logger, processorTimeoutMs }),
    lateSuccess: createLateSuccessRefunds({ refunds, settler, clock, ids, logger, firstCheckAfterMs, processorTimeoutMs }),
    notices: createRefundNotices({ refunds, settler, logger }),
  };
}
