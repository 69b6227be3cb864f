import { Code, ConnectError } from "@connectrpc/connect";
import { randomBytes } from "node:crypto";
import type { PaymentIntentListItem } from "../../gen/payments/v2/payment_intent_pb.js";
import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import type { AdvanceableClock } from "../lib/advanceable-clock.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { AttemptOutcome } from "../processor/payment-processor.js";
import { testCards } from "../processor/test-mode-processor.js";
import type { CheckoutService } from "../service/checkout-service.js";
import { invalid } from "../rules/invalid.js";
import type { PaymentExpiry } from "../service/payment-expiry.js";
import type { PaymentIntentService } from "../service/payment-intent-service.js";
import { assertTransition } from "../service/payment-state-machine.js";
import type { SettleAttempt } from "../service/settle-attempt.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import { createTestMerchant, type TestMerchant } from "./create-test-merchant.js";
import type { ForcedOutcome, ForcedOutcomes } from "./forced-outcomes.js";
import type { MerchantCreationLimits } from "./merchant-creation-limits.js";
import { inOtherMode } from "../service/mode-scope.js";
import type { MerchantEnrollment } from "./merchant-enrollment.js";

/** What a helper payment did: the attempt recorded, and the intent after it in the GET shape. */
export interface TestPayment {
  attempt: PaymentAttemptRecord;
  paymentIntent: PaymentIntentListItem;
}

/**
 * TestHelperService is what a test suite may do beyond the production API
 * (TEST_HELPERS=true). Payments and expiry go through the same service
 * functions as the hosted checkout and the expiry, so everything that follows
 * a real payment (the state machine, the attempt record, transaction, the
 * attempt limit, events) follows a helper's.
 */
export interface TestHelperService {
  /** Makes a merchant for the client at clientAddress, within the sandbox's merchant limits. */
  createMerchant(name: string | undefined, clientAddress: string | undefined): Promise<TestMerchant>;
  /** Pays the merchant's intent with the method (default: the intent's first) and the outcome given. */
  pay(merchantId: string, id: string, request: { paymentMethod: string; outcome: string }, livemode: boolean): Promise<TestPayment>;
  /** Settles the merchant's open attempt as the processor's later answer would (through the one SettleAttempt, source test_helper). */
  settle(merchantId: string, attemptId: string, outcome: "succeeded" | "declined", livemode: boolean): Promise<TestPayment>;
  /** Expires the merchant's pending intent now, as if CHECKOUT_TTL had passed. */
  expire(merchantId: string, id: string, livemode: boolean): Promise<PaymentIntentListItem>;
  /** Undefined without TEST_CLOCK: then the clock helpers are not served. */
  readonly clock: TestClockHelpers | undefined;
}

export interface TestClockHelpers {
  now(): Date;
  /** Moves the service's clock forward by whole seconds (the bounds are AdvanceClockRequest.seconds's rule). */
  advance(seconds: bigint): Date;
}

export interface TestHelperServiceDeps {
  intents: PaymentIntentStore;
  paymentIntents: PaymentIntentService;
  /** The checkout service the hosted page uses, built with outcomes.processor. */
  checkout: CheckoutService;
  outcomes: ForcedOutcomes;
  /** The one SettleAttempt the checkout, webhooks and reconciler commit outcomes through. */
  settle: SettleAttempt;
  expiry: PaymentExpiry;
  enrollment: MerchantEnrollment;
  clock: Clock;
  ids: IdGenerator;
  /** The service's clock when TEST_CLOCK=true. */
  testClock?: AdvanceableClock;
  /** Rate and cap of CreateMerchant; absent, unlimited (in-process callers). */
  merchantCreation?: MerchantCreationLimits;
}

/** createTestHelperService wires the helpers to the services they drive. */
export function createTestHelperService(deps: TestHelperServiceDeps): TestHelperService {
  const notFound = (id: string) => new ConnectError(`payment intent ${id} not found`, Code.NotFound);

  /**
   * The merchant's intent, not deleted, as GET finds it: another merchant's,
   * unknown and deleted are 404. The helpers move test-mode intents only
   * (issue 23, §1): a live key is refused, and a test key naming a live
   * intent gets GET's 404 that says so.
   */
  const testModeOnly = () => new ConnectError("the test helpers act on test mode only: call them with a test key (sk_test_…)", Code.FailedPrecondition);

  async function liveIntent(merchantId: string, id: string, livemode: boolean) {
    if (livemode) throw testModeOnly();
    const found = await deps.intents.findById(merchantId, id);
    if (!found || found.status === "cancelled") throw notFound(id);
    if (found.livemode) throw inOtherMode("payment intent", id, false);
    return found;
  }

  const testClock = deps.testClock;
  return {
    async createMerchant(name, clientAddress) {
      const limits = deps.merchantCreation;
      return limits ? limits.run(clientAddress, () => createTestMerchant(deps, name)) : createTestMerchant(deps, name);
    },

    async pay(merchantId, id, request, livemode) {
      // succeeded or declined: the field's rule ran in the pipeline.
      const outcome = request.outcome as ForcedOutcome;
      const intent = await liveIntent(merchantId, id, livemode);
      const method = request.paymentMethod || intent.paymentMethods[0]!;
      if (!intent.paymentMethods.includes(method)) {
        throw invalid(`paymentMethod ${method} is not allowed for payment intent ${id}: it allows ${intent.paymentMethods.join(", ")}`);
      }
      // The card form as a customer would fill it in, with the test card of the outcome.
      const expiry = `12/${deps.clock.now().getUTCFullYear() + 1}`;
      const card = method === "card" ? { number: outcome === "succeeded" ? testCards.succeeds : testCards.declined, expiry, cvv: "123" } : undefined;
      const result = await deps.outcomes.run(outcome, () => deps.checkout.pay(intent.checkoutToken, { method, card }));
      if (result.kind === "not-payable") {
        const now = result.view.intent;
        assertTransition(id, now.deletedAt ? "cancelled" : now.status, "processing");
        throw new Error(`payment intent ${id} is ${now.status} but was not paid`);
      }
      if (result.kind !== "attempted") throw new Error(`the checkout refused the helper's card form: ${result.errors.map((e) => e.field).join(", ")}`);
      return { attempt: result.attempt, paymentIntent: await deps.paymentIntents.get(merchantId, id, false) };
    },

    async settle(merchantId, attemptId, outcome, livemode) {
      if (livemode) throw testModeOnly();
      const attempt = await deps.intents.findAttempt(merchantId, attemptId);
      if (!attempt) throw new ConnectError(`payment attempt ${attemptId} not found`, Code.NotFound);
      // An attempt has its intent's mode: a live intent's attempt is the other mode's 404, as GET of the intent.
      const intent = await deps.intents.findById(merchantId, attempt.paymentIntentId);
      if (intent?.livemode) throw inOtherMode("payment attempt", attemptId, false);
      const refused = (now: string) =>
        new ConnectError(`payment attempt ${attemptId} is ${now}: only a processing or requires_action attempt can be settled`, Code.FailedPrecondition);
      if (attempt.outcome !== "processing" && attempt.outcome !== "requires_action") throw refused(attempt.outcome);
      // The processor's later answer, as its webhook would bring it; a success needs a reference, which becomes the transaction.
      const answer: AttemptOutcome =
        outcome === "succeeded"
          ? { kind: "succeeded", reference: attempt.processorReference ?? `txn_test_${randomBytes(12).toString("hex")}`, amount: attempt.amount, currency: "NGN" }
          : { kind: "declined", reference: attempt.processorReference, reason: "Declined by a test helper." };
      const settled = await deps.settle({ merchantId, attemptId }, answer, { source: "test_helper" });
      if (!settled) throw new ConnectError(`payment attempt ${attemptId} not found`, Code.NotFound);
      // Another path (the processor's webhook, the reconciler) settled it first.
      if (!settled.changed) throw refused(settled.attempt.outcome);
      return { attempt: settled.attempt, paymentIntent: await deps.paymentIntents.get(merchantId, attempt.paymentIntentId, false) };
    },

    async expire(merchantId, id, livemode) {
      const intent = await liveIntent(merchantId, id, livemode);
      // Its deadline brought forward to now, the intent takes the expiry's own transition (and events).
      const now = deps.clock.now();
      const due = intent.status === "pending" && intent.expiresAt > now ? { ...intent, expiresAt: now } : intent;
      const settled = await deps.expiry.settle(due);
      // Refused when it was not pending, or stopped being so meanwhile (paid, deleted).
      if (intent.status !== "pending" || settled.status !== "expired") {
        assertTransition(id, settled.status, "expired");
      }
      return deps.paymentIntents.get(merchantId, id, false);
    },

    clock: testClock && {
      now: () => testClock.now(),
      advance(seconds) {
        return testClock.advance(Number(seconds) * 1000);
      },
    },
  };
}
