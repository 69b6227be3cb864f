import type { LateSuccessReason } from "../domain/late-success.js";
import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord, PaymentIntentStatus } from "../domain/payment-intent.js";
import type { AttemptSettlement, SettleAttemptOptions } from "./payment-intent-store.js";

/** What a settlement changes: the attempt and the intent after it, and the late success it is. */
export interface SettlementChange {
  attempt: PaymentAttemptRecord;
  intent: PaymentIntentRecord;
  /** Whether the intent changes (status, next action, transaction). */
  intentChanged: boolean;
  /** The intent's status before, for the event the change records. */
  from: PaymentIntentStatus;
  /** A decline counted against an intent that was waiting: the payment_failed event's cue. */
  declinedAttempt: boolean;
  lateSuccess?: LateSuccessReason;
}

/** Intents that still wait for a payment: a success pays them, a decline counts against them. */
const waiting: ReadonlySet<PaymentIntentStatus> = new Set(["pending", "processing", "requires_action"]);

/**
 * decideSettlement is the rule of PaymentIntentStore.settleAttempt, applied
 * by both stores to the attempt and its intent as they are under the lock
 * (declinedBefore: the intent's other declined attempts). null: nothing
 * changes, because the attempt is already final, or requires_action came for
 * an attempt that is no longer processing (a late or repeated message).
 */
export function decideSettlement(
  intent: PaymentIntentRecord,
  attempt: PaymentAttemptRecord,
  declinedBefore: number,
  settlement: AttemptSettlement,
  options: SettleAttemptOptions,
): SettlementChange | null {
  const at = options.at;
  const live = intent.deletedAt === null;
  const from = intent.status;
  const unchanged = { intent, intentChanged: false, from, declinedAttempt: false };
  switch (settlement.outcome) {
    case "requires_action": {
      if (attempt.outcome !== "processing") return null;
      const next = { ...attempt, outcome: "requires_action" as const, processorReference: settlement.processorReference, nextActionUrl: settlement.url };
      if (!live || intent.status !== "processing") return { ...unchanged, attempt: next };
      return { attempt: next, intent: { ...intent, status: "requires_action", nextActionUrl: settlement.url, updatedAt: at }, intentChanged: true, from, declinedAttempt: false };
    }
    case "succeeded": {
      if (attempt.outcome === "succeeded" || attempt.outcome === "declined") return null;
      const next: PaymentAttemptRecord = { ...attempt, outcome: "succeeded", processorReference: settlement.processorReference, nextActionUrl: null, settledAt: at };
      if (live && waiting.has(intent.status)) {
        const paid: PaymentIntentRecord = { ...intent, status: "successful", transaction: settlement.processorReference, nextActionUrl: null, updatedAt: at };
        return { attempt: next, intent: paid, intentChanged: true, from, declinedAttempt: false };
      }
      const lateSuccess: LateSuccessReason = intent.status === "successful" ? "duplicate_payment" : "payment_after_close";
      return { ...unchanged, attempt: { ...next, lateSuccess }, lateSuccess };
    }
    case "declined": {
      if (attempt.outcome === "succeeded" || attempt.outcome === "declined") return null;
      const next: PaymentAttemptRecord = {
        ...attempt,
        outcome: "declined",
        processorReference: settlement.processorReference ?? attempt.processorReference,
        declineReason: settlement.declineReason,
        nextActionUrl: null,
        settledAt: at,
      };
      if (!live || !waiting.has(intent.status)) return { ...unchanged, attempt: next };
      const status: PaymentIntentStatus = declinedBefore + 1 >= options.maxAttempts ? "failed" : "pending";
      return { attempt: next, intent: { ...intent, status, nextActionUrl: null, updatedAt: at }, intentChanged: true, from, declinedAttempt: true };
    }
  }
}
