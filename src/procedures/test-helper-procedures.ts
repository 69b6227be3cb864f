import { Code, ConnectError } from "@connectrpc/connect";
import { TestHelperService, type PaymentAttempt } from "../../gen/payments/v2/test_helpers_pb.js";
import type { PaymentAttemptRecord } from "../domain/payment-attempt.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import type { TestHelperService as TestHelperRules } from "../sandbox/test-helper-service.js";
import { timestamp } from "../service/payment-intent-presenter.js";

/** The clock helpers' RPCs: served only with TEST_CLOCK=true. */
const clockMethods = new Set<string>([TestHelperService.method.advanceClock.name, TestHelperService.method.getClock.name]);

/**
 * createTestHelperProcedures adapts the test helpers to their RPCs, served on
 * every protocol like the API's. CreateMerchant needs no key (it is how a
 * suite gets one); the rest act for the key's merchant. Without the test
 * clock its two RPCs are left out, so they are Unimplemented (REST: 404).
 */
export function createTestHelperProcedures(rules: TestHelperRules): Procedure[] {
  const clock = rules.clock;
  // Left out below when the clock is off; this is what they would answer.
  const testClock = () => {
    if (!clock) throw new ConnectError("the test clock is off: start with TEST_CLOCK=true", Code.Unimplemented);
    return clock;
  };
  const procedures = defineProcedures(
    TestHelperService,
    {
      createMerchant: (request, call) => rules.createMerchant(request.name, call.context.clientAddress),
      createPaymentAttempt: async (request, call) => {
        const { attempt, paymentIntent } = await rules.pay(call.merchantId, request.id, request, call.livemode);
        return { attempt: attemptMessage(attempt), paymentIntent };
      },
      settlePaymentAttempt: async (request, call) => {
        // succeeded or declined: the field's rule ran in the pipeline.
        const outcome = request.outcome as "succeeded" | "declined";
        const { attempt, paymentIntent } = await rules.settle(call.merchantId, request.id, outcome, call.livemode);
        return { attempt: attemptMessage(attempt), paymentIntent };
      },
      expirePaymentIntent: (request, call) => rules.expire(call.merchantId, request.id, call.livemode),
      advanceClock: (request) => ({ now: timestamp(testClock().advance(request.seconds)) }),
      getClock: () => ({ now: timestamp(testClock().now()) }),
    },
    { requiresKey: { except: ["createMerchant"] } },
  );
  return clock ? procedures : procedures.filter((procedure) => !clockMethods.has(procedure.method.name));
}

/** attemptMessage renders a recorded attempt; never any card data (there is none to render). */
function attemptMessage(attempt: PaymentAttemptRecord): PaymentAttempt {
  return {
    $typeName: "payments.v2.PaymentAttempt",
    id: attempt.id,
    paymentIntentId: attempt.paymentIntentId,
    amount: attempt.amount,
    paymentMethod: attempt.method,
    outcome: attempt.outcome,
    reference: attempt.processorReference ?? undefined,
    declineReason: attempt.declineReason ?? undefined,
    createdAt: timestamp(attempt.createdAt),
  };
}

/**
 * testHelperProceduresOff answers every TestHelperService RPC that is not
 * served (all of them with TEST_HELPERS=false, the clock's without
 * TEST_CLOCK) with Unimplemented and a message naming the setting, on every
 * RPC protocol in its own error shape: a Connect or gRPC client learns what
 * to turn on instead of reading a REST 404. No key is asked for: the answer
 * says nothing about any merchant. REST keeps its 404, as for any route the
 * service does not have.
 */
export function testHelperProceduresOff(served: readonly Procedure[], helpersOn: boolean): Procedure[] {
  const have = new Set(served.map((procedure) => procedure.path));
  const message = helpersOn
    ? "the test clock is off: start the service with TEST_CLOCK=true"
    : "the test helpers are off: start the service with TEST_HELPERS=true (a sandbox only)";
  return TestHelperService.methods
    .map((method) => ({ method, path: `/${TestHelperService.typeName}/${method.name}` }))
    .filter(({ path }) => !have.has(path))
    .map(({ method, path }) => ({
      service: TestHelperService,
      method,
      path,
      requiresKey: false,
      unary: async () => {
        throw new ConnectError(message, Code.Unimplemented);
      },
    }));
}
