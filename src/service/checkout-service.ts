import { Code, ConnectError } from "@connectrpc/connect";
import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../domain/payment-intent.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { AttemptOutcome, CardDetails, PaymentInstructions } from "../processor/payment-processor.js";
import type { ProcessorRegistry } from "../processor/processor-registry.js";
import type { MerchantDirectory } from "../store/merchant-directory.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import { parseCardForm, type CardForm, type FieldError } from "./card-form.js";
import type { PaymentEvents } from "./payment-events.js";
import type { PaymentExpiry } from "./payment-expiry.js";
import type { PaymentMethodCatalogue, PaymentMethodView } from "./payment-method-catalogue.js";
import type { SettleAttempt } from "./settle-attempt.js";

/** One method section of the checkout page. */
export interface CheckoutMethod {
  method: PaymentMethodView;
  instructions: PaymentInstructions;
  /** Whether the processor that collects this method moves no money. */
  testMode: boolean;
}

/** CheckoutView is everything the customer's page shows. */
export interface CheckoutView {
  intent: PaymentIntentRecord;
  merchantName: string;
  /** Empty unless the intent can still be paid. */
  methods: CheckoutMethod[];
  attemptsLeft: number;
  /** Every method shown is collected in test mode: no money moves on this page. */
  testMode: boolean;
}

/** What the customer posted for one method. */
export interface PaymentSubmission {
  method: string;
  card?: CardForm;
}

/**
 * The outcome of pay(), as data the page renders: the form had mistakes, the
 * intent could not be paid (paid in another tab, expired, cancelled, an
 * attempt already with the processor), or an attempt was made (its outcome
 * may still be open: processing or requires_action).
 */
export type PayResult =
  | { kind: "form-errors"; view: CheckoutView; errors: FieldError[] }
  | { kind: "not-payable"; view: CheckoutView }
  | { kind: "attempted"; intent: PaymentIntentRecord; attempt: PaymentAttemptRecord };

/** An attempt of the token's intent, with the intent as it is now. */
export interface AttemptView {
  intent: PaymentIntentRecord;
  attempt: PaymentAttemptRecord;
}

/** An attempt the customer came back from: awaitingCustomer when the processor still waits for them at its page. */
export interface ReturnedAttempt extends AttemptView {
  awaitingCustomer: boolean;
}

/** CheckoutService is the customer's side of a payment intent, reached by its checkout token. */
export interface CheckoutService {
  view(token: string): Promise<CheckoutView>;
  pay(token: string, submission: PaymentSubmission): Promise<PayResult>;
  /** One attempt on the token's intent, for the result page; undefined when it is not one of its attempts. */
  attemptOf(token: string, attemptId: string): Promise<PaymentAttemptRecord | undefined>;
  /**
   * The customer is back from the processor (the return URL): an open
   * attempt is asked about and settled (source "return") before it is
   * shown. undefined when it is not one of the intent's attempts.
   */
  returned(token: string, attemptId: string): Promise<ReturnedAttempt | undefined>;
}

export interface CheckoutServiceDeps {
  intents: PaymentIntentStore;
  merchants: MerchantDirectory;
  /** Which processor takes each method, and each attempt's own processor by name. */
  processors: ProcessorRegistry;
  catalogue: PaymentMethodCatalogue;
  expiry: PaymentExpiry;
  events: PaymentEvents;
  /** Commits every outcome (attempt-settler.ts). */
  settle: SettleAttempt;
  clock: Clock;
  ids: IdGenerator;
  /** Declined attempts after which the intent fails: MAX_PAYMENT_ATTEMPTS. */
  maxAttempts: number;
  /** The service's public URL: the processor sends the customer back to {publicUrl}/checkout/{token}/return. */
  publicUrl: string;
  /** PROCESSOR_TIMEOUT_MS: the longest one processor call is waited for. */
  processorTimeoutMs: number;
}

/** The reconciler's first look at an attempt comes after the checkout's own call had its time, and this much more. */
const firstCheckMarginMs = 30_000;

/**
 * createCheckoutService runs the payment for customers: show the intent,
 * record an attempt (processing) in a short transaction of its own, call the
 * processor outside any transaction (PROCESSOR_TIMEOUT_MS), and commit its
 * answer through the one SettleAttempt. Only one attempt of an intent can be
 * open, so two tabs or a double submit give one payment; an answer that does
 * not come leaves the attempt processing for the reconciler.
 */
export function createCheckoutService(deps: CheckoutServiceDeps): CheckoutService {
  const notFound = () => new ConnectError("no such checkout", Code.NotFound);
  const publicUrl = deps.publicUrl.replace(/\/+$/, "");

  async function intentOf(token: string): Promise<PaymentIntentRecord> {
    const found = await deps.intents.findByCheckoutToken(token);
    if (!found) throw notFound();
    return deps.expiry.settle(found);
  }

  async function viewOf(intent: PaymentIntentRecord): Promise<CheckoutView> {
    const attempts = intent.status === "pending" ? await deps.intents.listAttempts(intent.merchantId, intent.id) : [];
    const declined = attempts.filter((a) => a.outcome === "declined").length;
    // A method whose processor is no longer configured here (its key removed) is not offered,
    // nor, for a live intent, one whose processor is in test mode (pay refuses it).
    const methods: CheckoutMethod[] = [];
    for (const name of intent.status === "pending" ? intent.paymentMethods : []) {
      const processor = deps.processors.forMethod(name);
      if (processor && !(intent.livemode && processor.testMode)) {
        methods.push({ method: deps.catalogue.describe(name), instructions: processor.instructions(intent, name), testMode: processor.testMode });
      }
    }
    return {
      intent,
      merchantName: (await deps.merchants.nameOf(intent.merchantId)) ?? intent.merchantId,
      methods,
      attemptsLeft: Math.max(0, deps.maxAttempts - declined),
      // The test banner shows for test-mode intents only (issue 23, §1).
      testMode: !intent.livemode,
    };
  }

  /** Calls the processor with its deadline; whatever does not answer in time (or throws) is unknown. */
  async function ask(call: (signal: AbortSignal) => Promise<AttemptOutcome>): Promise<AttemptOutcome> {
    const signal = AbortSignal.timeout(deps.processorTimeoutMs);
    const timedOut = new Promise<AttemptOutcome>((resolve) =>
      signal.addEventListener("abort", () => resolve({ kind: "unknown", reason: "no answer from the processor in time" }), { once: true }),
    );
    try {
      return await Promise.race([call(signal), timedOut]);
    } catch (error) {
      return { kind: "unknown", reason: error instanceof Error ? error.message : String(error) };
    }
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
      const processor = deps.processors.forMethod(submission.method);
      if (!processor) throw new ConnectError(`payment method ${submission.method} is not available on this service now`, Code.InvalidArgument);
      if (intent.status !== "pending") return { kind: "not-payable", view: await viewOf(intent) };
      // Test-mode intents go to a test processor; a live intent never does (no real money would move).
      if (intent.livemode && processor.testMode) {
        throw new ConnectError("this live payment cannot be taken here: its processor is in test mode", Code.FailedPrecondition);
      }
      let card: CardDetails | undefined;
      if (submission.method === "card") {
        const parsed = parseCardForm(submission.card ?? { number: "", expiry: "", cvv: "" }, deps.clock.now());
        if ("errors" in parsed) return { kind: "form-errors", view: await viewOf(intent), errors: parsed.errors };
        card = parsed.card;
      }

      // 1. The attempt is committed (processing) before the processor hears of it.
      const now = deps.clock.now();
      const id = deps.ids.paymentAttemptId();
      const attempt: PaymentAttemptRecord = {
        id,
        paymentIntentId: intent.id,
        merchantId: intent.merchantId,
        amount: intent.amount,
        method: submission.method,
        outcome: "processing",
        processor: processor.name,
        idempotencyKey: id,
        processorReference: null,
        nextActionUrl: null,
        declineReason: null,
        lateSuccess: null,
        createdAt: now,
        settledAt: null,
      };
      const begun = await deps.intents.beginAttempt(attempt, new Date(now.getTime() + deps.processorTimeoutMs + firstCheckMarginMs));
      if (!begun) throw notFound();
      // Decided by the store: what another tab did first counts.
      if (!begun.begun) return { kind: "not-payable", view: await viewOf(await deps.expiry.settle(begun.intent)) };
      deps.events.transitioned(intent.merchantId, intent.id, "pending", "processing");

      // 2. The processor, outside any transaction, under its deadline.
      const outcome = await ask((signal) =>
        processor.begin(
          {
            idempotencyKey: attempt.idempotencyKey,
            paymentIntentId: intent.id,
            merchantId: intent.merchantId,
            amount: intent.amount,
            currency: intent.currency,
            method: submission.method,
            customerEmail: intent.customerEmail,
            card,
            returnUrl: `${publicUrl}/checkout/${token}/return?attempt=${encodeURIComponent(id)}`,
          },
          signal,
        ),
      );

      // 3. Its answer, committed once, in a transaction of its own.
      const settled = await deps.settle({ merchantId: intent.merchantId, attemptId: id }, outcome, { source: "checkout" });
      if (!settled) throw notFound();
      return { kind: "attempted", intent: settled.intent, attempt: settled.attempt };
    },

    async attemptOf(token, attemptId) {
      const intent = await intentOf(token);
      const attempt = await deps.intents.findAttempt(intent.merchantId, attemptId);
      return attempt?.paymentIntentId === intent.id ? attempt : undefined;
    },

    async returned(token, attemptId) {
      const intent = await intentOf(token);
      const attempt = await deps.intents.findAttempt(intent.merchantId, attemptId);
      if (attempt?.paymentIntentId !== intent.id) return undefined;
      if (attempt.outcome !== "processing" && attempt.outcome !== "requires_action") return { intent, attempt, awaitingCustomer: false };
      // Asked of the processor that took it, knowing the customer has left the processor's page.
      const processor = deps.processors.get(attempt.processor);
      const outcome: AttemptOutcome = processor
        ? await ask((signal) =>
            processor.status(
              { idempotencyKey: attempt.idempotencyKey, reference: attempt.processorReference, amount: attempt.amount, customerReturned: true },
              signal,
            ),
          )
        : { kind: "unknown", reason: `no processor named ${attempt.processor}` };
      const settled = await deps.settle({ merchantId: intent.merchantId, attemptId }, outcome, { source: "return" });
      // Still open: either the processor waits for the customer at its page (a redirect), or for its own answer.
      const awaitingCustomer = outcome.kind === "redirect";
      return settled ? { intent: settled.intent, attempt: settled.attempt, awaitingCustomer } : { intent, attempt, awaitingCustomer };
    },
  };
}
