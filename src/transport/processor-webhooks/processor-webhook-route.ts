import type { HttpRoute } from "../../http/http-route.js";
import { pathOf } from "../../http/http-route.js";
import type { NodeResponse } from "../../http/node-http.js";
import { BodyTooLarge, ClientGone, readBody } from "../../http/read-body.js";
import type { Logger } from "../../lib/logger.js";
import type { PaymentProcessor } from "../../processor/payment-processor.js";
import { ProcessorWebhookRejected } from "../../processor/processor-webhook-rejected.js";
import type { RefundNoticeHandler } from "../../service/refund-notice-handler.js";
import type { SettleAttempt } from "../../service/settle-attempt.js";
import type { PaymentIntentStore } from "../../store/payment-intent-store.js";

export interface ProcessorWebhookRouteOptions {
  /** The processors by name: {processor} in the path picks the one whose scheme verifies the message. */
  processors: { get(name: string): Pick<PaymentProcessor, "parseWebhook"> | undefined };
  intents: Pick<PaymentIntentStore, "findAttemptForProcessor">;
  settle: SettleAttempt;
  refunds: RefundNoticeHandler;
  logger: Logger;
}

/** A processor's notice is small; anything larger is not one. */
export const maxProcessorWebhookBytes = 64 * 1024;

const pattern = /^\/processor-webhooks\/([a-z][a-z0-9_]{0,31})$/;

/**
 * createProcessorWebhookRoute serves POST /processor-webhooks/{processor},
 * outside BASE_PATH beside /checkout (docs/payments.md, Processor webhooks).
 * The processor's own scheme verifies the message before anything else (401,
 * nothing changed, when it does not); a verified notice is settled through
 * the one SettleAttempt (source "webhook") or the refund notices, and only
 * after that commit is it answered 200, so a notice whose outcome was not
 * committed is answered 503 and sent again. The same notice twice, or one
 * out of order, changes nothing: settlements apply once and final outcomes
 * never change.
 */
export function createProcessorWebhookRoute(options: ProcessorWebhookRouteOptions): HttpRoute {
  const { logger } = options;
  const answer = (res: NodeResponse, status: number, message: string) => {
    const body = JSON.stringify({ status, message });
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
    res.end(body);
  };
  return {
    name: "/processor-webhooks/{processor}",
    methods: ["POST"],
    matches: (path) => path.startsWith("/processor-webhooks/"),
    async handle(req, res, context) {
      const name = pattern.exec(pathOf(req.url))?.[1];
      const processor = name === undefined ? undefined : options.processors.get(name);
      if (!processor) return answer(res, 404, "no such processor");
      let body: Buffer;
      try {
        body = await readBody(req, maxProcessorWebhookBytes);
      } catch (error) {
        if (error instanceof ClientGone) {
          context.clientGone = true;
          return;
        }
        if (error instanceof BodyTooLarge) return answer(res, 413, "the notice is too large");
        throw error;
      }
      let notice;
      try {
        notice = processor.parseWebhook(req.headers, body);
      } catch (error) {
        if (!(error instanceof ProcessorWebhookRejected)) throw error;
        logger.warn({ requestId: context.requestId, processor: name, reason: error.message }, "a processor webhook did not verify: nothing changed");
        return answer(res, 401, "the notice did not verify");
      }
      try {
        if (notice.kind === "attempt") {
          const attempt = await options.intents.findAttemptForProcessor(name!, notice.idempotencyKey);
          if (!attempt) {
            logger.warn({ processor: name, attemptKey: notice.idempotencyKey, noticeId: notice.noticeId }, "a processor's notice names an attempt we do not know");
          } else {
            await options.settle({ merchantId: attempt.merchantId, attemptId: attempt.id }, notice.outcome, { source: "webhook" });
          }
        } else if (notice.kind === "refund") {
          await options.refunds.onRefundNotice(notice);
        }
      } catch (error) {
        logger.error({ requestId: context.requestId, processor: name, err: error instanceof Error ? error.message : String(error) }, "a processor notice could not be committed: the processor sends it again");
        return answer(res, 503, "try again");
      }
      answer(res, 200, "ok");
    },
  };
}
