import { hash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { CreateRefundRequest, ListRefundsRequest, ListRefundsResponse, Refund } from "../../gen/payments/v2/refunds_pb.js";
import type { MetaEntry } from "../domain/meta.js";
import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { MerchantRefundReason, RefundRecord } from "../domain/refund.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import { invalid } from "../rules/invalid.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { RefundStore } from "../store/refund-store.js";
import type { PageTokenCodec } from "./page-token.js";
import { metaEntriesOf } from "./meta-entries.js";
import { isLapsed } from "./payment-expiry.js";
import { refundMessage } from "./refund-presenter.js";
import { inOtherMode, modeName } from "./mode-scope.js";
import { attemptRefOf, type RefundSettler } from "./refund-settler.js";

/** The result of create: the refund, and whether it was an idempotent replay. */
export interface CreateRefundResult {
  refund: Refund;
  replayed: boolean;
}

/**
 * RefundService holds the rules of a merchant's refunds: only a successful
 * intent, never more than is left of what was paid, clientReference
 * idempotent forever, every read scoped to the caller's merchant and mode
 * (a refund has its payment intent's mode).
 */
export interface RefundService {
  create(merchantId: string, request: CreateRefundRequest, livemode: boolean): Promise<CreateRefundResult>;
  get(merchantId: string, id: string, livemode: boolean): Promise<Refund>;
  /** A page of one intent's refunds, newest first; nextPageToken is "" on the last page. */
  list(merchantId: string, request: ListRefundsRequest, livemode: boolean): Promise<ListRefundsResponse>;
}

export interface RefundServiceDeps {
  intents: PaymentIntentStore;
  refunds: RefundStore;
  settler: RefundSettler;
  pageTokens: PageTokenCodec;
  clock: Clock;
  ids: Pick<IdGenerator, "refundId">;
  /**
   * How long a new refund waits before the reconciler may ask about it: the
   * request that made it asks first, and has PROCESSOR_TIMEOUT_MS to do so.
   */
  firstCheckAfterMs: number;
  /** Bounds the request's own processor call; its answer comes later through the reconciler. */
  processorTimeoutMs: number;
}

/**
 * paymentOf is the attempt whose payment paid the intent: the successful
 * one whose reference became its transaction (a late or duplicate success
 * never does).
 */
export function paymentOf(intent: PaymentIntentRecord, attempts: readonly PaymentAttemptRecord[]): PaymentAttemptRecord | undefined {
  return attempts.find((a) => a.outcome === "succeeded" && a.processorReference === intent.transaction);
}

/** Thrown inside a reservation that saw the intent paid after its attempts were read: read them again. */
class PaidMeanwhile extends Error {
  constructor(intentId: string) {
    super(`payment intent ${intentId} is successful, and none of its attempts read paid it`);
  }
}

/** createRefundService wires the rules to the stores, the settler, the clock and the ids. */
export function createRefundService(deps: RefundServiceDeps): RefundService {
  const { intents, refunds, clock } = deps;
  const intentNotFound = (id: string) => new ConnectError(`payment intent ${id} not found`, Code.NotFound);

  /** Under the intent's lock: the refund to reserve, a replay (null), or why not. */
  function decide(request: ValidRequest, attempts: readonly PaymentAttemptRecord[], livemode: boolean) {
    return (intent: PaymentIntentRecord, existing: RefundRecord | undefined): RefundRecord | null => {
      if (existing && existing.livemode !== livemode) {
        throw new ConnectError(`clientReference ${request.clientReference} is already used by a refund in ${modeName(existing.livemode)} mode`, Code.AlreadyExists);
      }
      if (existing) {
        if (existing.requestFingerprint === request.fingerprint) return null;
        throw new ConnectError(
          `clientReference ${request.clientReference} is already used by refund ${existing.id} with a different request`,
          Code.AlreadyExists,
        );
      }
      if (intent.status === "cancelled") throw intentNotFound(intent.id);
      if (intent.livemode !== livemode) throw inOtherMode("payment intent", intent.id, livemode);
      const now = clock.now();
      const status = isLapsed(intent, now) ? "expired" : intent.status;
      if (status !== "successful") {
        throw new ConnectError(`payment intent ${intent.id} is ${status}: only a successful payment intent can be refunded`, Code.FailedPrecondition);
      }
      const payment = paymentOf(intent, attempts);
      if (!payment) throw new PaidMeanwhile(intent.id);
      const left = intent.amount - intent.amountRefunded;
      if (left === 0n) throw new ConnectError(`payment intent ${intent.id} is refunded in full already`, Code.FailedPrecondition);
      const amount = request.amount ?? left;
      if (amount > left) {
        throw new ConnectError(`amount ${amount} is more than the ${left} left to refund of payment intent ${intent.id}`, Code.FailedPrecondition);
      }
      return {
        id: deps.ids.refundId(intent.livemode),
        merchantId: intent.merchantId,
        livemode: intent.livemode,
        paymentIntentId: intent.id,
        attemptId: payment.id,
        amount,
        status: "pending",
        reason: request.reason,
        clientReference: request.clientReference,
        requestFingerprint: request.fingerprint,
        failureReason: null,
        // The processor that took the payment gives it back.
        processor: payment.processor,
        processorReference: null,
        createdAt: now,
        updatedAt: now,
        checkAfter: new Date(now.getTime() + deps.firstCheckAfterMs),
        meta: request.meta,
      };
    };
  }

  /** Reserves the refund; answers the reservation with the attempt it gives back. */
  async function reserve(merchantId: string, request: ValidRequest, livemode: boolean) {
    // The attempts are read before the lock: once an intent is successful its
    // paying attempt never changes, and a reservation that finds the intent
    // paid after this read reads them again.
    for (let tries = 0; ; tries++) {
      const attempts = await intents.listAttempts(merchantId, request.paymentIntentId);
      try {
        const reservation = await refunds.reserve(merchantId, request.paymentIntentId, { clientReference: request.clientReference }, decide(request, attempts, livemode));
        return reservation && { reservation, payment: attempts.find((a) => a.id === reservation.refund.attemptId) };
      } catch (error) {
        if (!(error instanceof PaidMeanwhile) || tries > 0) throw error;
      }
    }
  }

  return {
    async create(merchantId, request, livemode) {
      const valid = readCreate(request);
      const reserved = await reserve(merchantId, valid, livemode);
      if (!reserved) throw intentNotFound(valid.paymentIntentId);
      const { reservation, payment } = reserved;
      if (!reservation.reserved) return { refund: refundMessage(reservation.refund), replayed: true };
      // The reservation is committed: the processor is asked with no transaction open.
      const refund = await deps.settler.ask(reservation.refund, attemptRefOf(payment!), AbortSignal.timeout(deps.processorTimeoutMs));
      return { refund: refundMessage(refund), replayed: false };
    },

    async get(merchantId, id, livemode) {
      const found = await refunds.findById(merchantId, id);
      if (!found) throw new ConnectError(`refund ${id} not found`, Code.NotFound);
      if (found.livemode !== livemode) throw inOtherMode("refund", id, livemode);
      return refundMessage(found);
    },

    async list(merchantId, request, livemode) {
      // The field rules filled in the default and checked the bounds.
      const pageSize = request.pageSize!;
      const intent = await intents.findById(merchantId, request.paymentIntentId);
      if (!intent || intent.status === "cancelled") throw intentNotFound(request.paymentIntentId);
      if (intent.livemode !== livemode) throw inOtherMode("payment intent", intent.id, livemode);
      const scope = { merchantId, query: ["refunds", request.paymentIntentId] };
      let after;
      if (request.pageToken !== "") {
        after = deps.pageTokens.decode(request.pageToken, scope);
        if (!after) throw invalid("pageToken is not valid for this query");
      }
      const rows = await refunds.listByIntent({ merchantId, paymentIntentId: request.paymentIntentId, limit: pageSize + 1, after });
      const page = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
      const last = page[page.length - 1];
      return {
        $typeName: "payments.v2.ListRefundsResponse",
        refunds: page.map(refundMessage),
        nextPageToken: rows.length > pageSize && last ? deps.pageTokens.encode(last, scope) : "",
      };
    },
  };
}

/** A create request that passed every rule, with its reason defaulted and its fingerprint. */
interface ValidRequest {
  paymentIntentId: string;
  /** undefined: everything that is left. */
  amount: bigint | undefined;
  reason: MerchantRefundReason;
  clientReference: string;
  meta: MetaEntry[];
  fingerprint: string;
}

/**
 * readCreate keeps what makes two creates the same request. The field
 * rules (the proto's options) have checked the fields and filled in the
 * reason's default; the fingerprint covers the request as sent (an omitted
 * amount stays omitted, since what it means changes as refunds are made).
 */
function readCreate(request: CreateRefundRequest): ValidRequest {
  const reason = request.reason as MerchantRefundReason;
  const amount = request.amount;
  const meta = metaEntriesOf(request.meta);
  // Meta only when given, so refunds made before it existed still replay.
  const metaPart = meta.length > 0 ? [meta.map((e) => [e.name, e.value])] : [];
  const fingerprint = hash("sha256", JSON.stringify([request.paymentIntentId, amount?.toString() ?? null, reason, ...metaPart]), "hex");
  return { paymentIntentId: request.paymentIntentId, amount, reason, clientReference: request.clientReference, meta, fingerprint };
}
