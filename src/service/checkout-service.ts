import { Code, ConnectError } from "@connectrpc/connect";
import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { CardDetails, PaymentInstructions } from "../processor/payment-processor.js";
import type { ChargingProcessor as PaymentProcessor } from "../processor/test-mode-processor.js";
import type { MerchantDirectory } from "../store/merchant-directory.js";
import type { AttemptDecision, PaymentIntentStore } from "../store/payment-intent-store.js";
import { parseCardForm, type CardForm, type FieldError } from "./card-form.js";
import type { PaymentEvents } from "./payment-events.js";
import { isLapsed, type PaymentExpiry } from "./payment-expiry.js";
import { assertTransition } from "./payment-state-machine.js";
import type { PaymentMethodCatalogue, PaymentMethodView } from "./payment-method-catalogue.js";

/** One method section of the checkout page. */
export interface CheckoutMethod {
  method: PaymentMethodView;
  instructions: PaymentInstructions;
}

/** CheckoutView is everything the customer's page shows. */
export interface CheckoutView {
  intent: PaymentIntentRecord;
  merchantName: string;
  /** Empty unless the intent can still be paid. */
  methods: CheckoutMethod[];
  attemptsLeft: number;
  testMode: boolean;
}

/** What the customer posted for one method. */
export interface PaymentSubmission {
  method: string;
  card?: CardForm;
}

/** The outcome of pay(): the form had mistakes, or an attempt was made. */
export type PayResult =
  | { kind: "form-errors"; view: CheckoutView; errors: FieldError[] }
  | { kind: "attempted"; intent: PaymentIntentRecord; attempt: PaymentAttemptRecord };

/** CheckoutService is the customer's side of a payment intent, reached by its checkout token. */
export interface CheckoutService {
  view(token: string): Promise<CheckoutView>;
  pay(token: string, submission: PaymentSubmission): Promise<PayResult>;
  /** One attempt on the token's intent, for the result page; undefined when it is not one of its attempts. */
  attemptOf(token: string, attemptId: string): Promise<PaymentAttemptRecord | undefined>;
}

export interface CheckoutServiceDeps {
  intents: PaymentIntentStore;
  merchants: MerchantDirectory;
  processor: PaymentProcessor;
  catalogue: PaymentMethodCatalogue;
  expiry: PaymentExpiry;
  events: PaymentEvents;
  clock: Clock;
  ids: IdGenerator;
  /** Declined attempts after which the intent fails: MAX_PAYMENT_ATTEMPTS. */
  maxAttempts: number;
}

/**
 * createCheckoutService runs the payment lifecycle for customers: show the
 * intent, take an attempt through the processor, and move the intent along
 * the state machine (successful on success; failed after maxAttempts
 * declines; expired past its deadline). Attempts on one intent are serialized
 * by the store, so two tabs or a double submit give one successful payment.
 */
export function createCheckoutService(deps: CheckoutServiceDeps): CheckoutService {
  const notFound = () => new ConnectError("no such checkout", Code.NotFound);

  async function intentOf(token: string): Promise<PaymentIntentRecord> {
    const found = await deps.intents.findByCheckoutToken(token);
    if (!found) throw notFound();
    return deps.expiry.settle(found);
  }

  async function viewOf(intent: PaymentIntentRecord): Promise<CheckoutView> {
    const attempts = intent.status === "pending" ? await deps.intents.listAttempts(intent.merchantId, intent.id) : [];
    const declined = attempts.filter((a) => a.outcome === "declined").length;
    return {
      intent,
      merchantName: (await deps.merchants.nameOf(intent.merchantId)) ?? intent.merchantId,
      methods:
        intent.status === "pending" && intent.deletedAt === null
          ? intent.paymentMethods.map((name) => ({
              method: deps.catalogue.describe(name),
              instructions: deps.processor.instructions(intent.id, name),
            }))
          : [],
      attemptsLeft: Math.max(0, deps.maxAttempts - declined),
      testMode: deps.processor.testMode,
    };
  }

  return {
    async view(token) {
      return viewOf(await intentOf(token));
    },

    async pay(token, submission) {
      const intent = await intentOf(token);
      if (!intent.paymentMethods.includes(submission.method)) {
        throw new ConnectError(`payment method ${submission.method} is not offered for this payment`, Code.InvalidArgument);
      }
      let card: CardDetails | undefined;
      if (submission.method === "card") {
        const parsed = parseCardForm(submission.card ?? { number: "", expiry: "", cvv: "" }, deps.clock.now());
        if ("errors" in parsed) return { kind: "form-errors", view: await viewOf(intent), errors: parsed.errors };
        card = parsed.card;
      }

      const result = await deps.intents.attempt(intent.merchantId, intent.id, async (current, earlier): Promise<AttemptDecision> => {
        const now = deps.clock.now();
        // Decided under the lock: what another tab did first counts.
        if (isLapsed(current, now)) return { attempt: null, next: { status: "expired", at: now } };
        if (current.deletedAt !== null || current.status !== "pending") return { attempt: null, next: null };
        const charge = await deps.processor.charge({ paymentIntentId: current.id, amount: current.amount, method: submission.method, card });
        const id = deps.ids.paymentAttemptId();
        const attempt: PaymentAttemptRecord = {
          id,
          paymentIntentId: current.id,
          merchantId: current.merchantId,
          amount: current.amount,
          method: submission.method,
          outcome: charge.outcome,
          processor: deps.processor.name,
          idempotencyKey: id,
          processorReference: charge.reference,
          nextActionUrl: null,
          declineReason: charge.outcome === "declined" ? (charge.declineReason ?? "The payment was declined.") : null,
          lateSuccess: null,
          createdAt: now,
          settledAt: now,
        };
        if (charge.outcome === "succeeded") {
          return { attempt, next: { status: "successful", transaction: charge.reference, at: now } };
        }
        const declined = earlier.filter((a) => a.outcome === "declined").length + 1;
        return { attempt, next: declined >= deps.maxAttempts ? { status: "failed", at: now } : null };
      });
      if (!result) throw notFound();
      if (result.intent.status !== intent.status) {
        deps.events.transitioned(intent.merchantId, intent.id, intent.status, result.intent.status);
      }
      if (!result.attempt) {
        // Nothing was charged: the intent was no longer payable.
        assertTransition(intent.id, result.intent.deletedAt ? "cancelled" : result.intent.status, "successful");
        throw new ConnectError(`payment intent ${intent.id} cannot be paid`, Code.FailedPrecondition);
      }
      return { kind: "attempted", intent: result.intent, attempt: result.attempt };
    },

    async attemptOf(token, attemptId) {
      const intent = await intentOf(token);
      return (await deps.intents.listAttempts(intent.merchantId, intent.id)).find((a) => a.id === attemptId);
    },
  };
}
