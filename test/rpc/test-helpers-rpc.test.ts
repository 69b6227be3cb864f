import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type CallOptions, type Client, type Interceptor } from "@connectrpc/connect";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { TestHelperService } from "../../gen/payments/v2/test_helpers_pb.js";
import { startSandboxService, type SandboxService } from "../support/sandbox-service.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";

const merchantIdPattern = /^mer_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("TestHelperService over RPC", () => {
  let withClock: SandboxService;
  let withoutClock: SandboxService;
  let off: SandboxService;
  before(async () => {
    withClock = await startSandboxService({ TEST_CLOCK: "true" });
    withoutClock = await startSandboxService();
    off = await startSandboxService({ TEST_HELPERS: "false", API_KEYS: "acme:sk_test_acme_0123456789abcdef" });
  });
  after(async () => {
    await Promise.all([withClock.close(), withoutClock.close(), off.close()]);
  });

  for (const protocol of rpcProtocols) {
    describe(`over ${protocol.name}`, () => {
      const contentTypes: string[] = [];
      const recordContentType: Interceptor = (next) => async (req) => {
        const res = await next(req);
        contentTypes.push(res.header.get("content-type") ?? "");
        return res;
      };
      const helpersOf = (service: SandboxService) => createClient(TestHelperService, protocol.transport(service.url, [recordContentType]));
      let helpers: Client<typeof TestHelperService>;
      let intents: Client<typeof PaymentIntentService>;
      let as: CallOptions;
      let n = 0;
      const newIntent = (paymentMethod: string[] = []) =>
        intents.createPaymentIntent(
          { amount: 50000n, customerEmail: "ada@example.com", clientReference: `rpc-${protocol.name.replace(/\W+/g, "-")}-${++n}`, paymentMethod },
          as,
        );

      before(async () => {
        helpers = helpersOf(withClock);
        intents = createClient(PaymentIntentService, protocol.transport(withClock.url, []));
        const merchant = await helpers.createMerchant({ name: "RPC Stores" });
        as = { headers: { authorization: `Bearer ${merchant.apiKey}` } };
      });

      it("creates a merchant without a key, whose key works on the API", async () => {
        const merchant = await helpers.createMerchant({});
        assert.match(merchant.merchantId, merchantIdPattern);
        assert.match(merchant.apiKey, /^sk_test_[A-Za-z0-9]{36}$/);
        const listed = await intents.listPaymentIntents({}, { headers: { authorization: `Bearer ${merchant.apiKey}` } });
        assert.deepEqual(listed.paymentIntents, []);
        assert.ok(contentTypes.length > 0 && contentTypes.every((type) => protocol.contentType.test(type)), contentTypes.join(", "));
      });

      it("pays: a decline leaves the intent pending, a success makes it successful with the attempt's reference", async () => {
        const intent = await newIntent(["card", "bank_transfer"]);
        const declined = await helpers.createPaymentAttempt({ id: intent.id, paymentMethod: "bank_transfer", outcome: "declined" }, as);
        assert.equal(declined.attempt?.outcome, "declined");
        assert.equal(declined.attempt?.paymentMethod, "bank_transfer");
        assert.equal(declined.attempt?.amount, 50000n);
        assert.equal(declined.paymentIntent?.status, "pending");
        const paid = await helpers.createPaymentAttempt({ id: intent.id, outcome: "succeeded" }, as);
        assert.equal(paid.attempt?.paymentMethod, "card");
        assert.equal(paid.attempt?.declineReason, undefined);
        assert.equal(paid.paymentIntent?.status, "successful");
        assert.equal(paid.paymentIntent?.transaction, paid.attempt?.reference);
        assert.deepEqual(await intents.getPaymentIntent({ id: intent.id }, as), paid.paymentIntent);
      });

      it("puts an attempt into processing, then settles it later, once", async () => {
        const intent = await newIntent(["bank_transfer"]);
        const open = await helpers.createPaymentAttempt({ id: intent.id, outcome: "processing" }, as);
        assert.equal(open.attempt?.outcome, "processing");
        assert.equal(open.paymentIntent?.status, "processing");
        const settled = await helpers.settlePaymentAttempt({ id: open.attempt!.id, outcome: "succeeded" }, as);
        assert.equal(settled.attempt?.outcome, "succeeded");
        assert.equal(settled.paymentIntent?.status, "successful");
        assert.equal(settled.paymentIntent?.transaction, open.attempt?.reference);
        assert.deepEqual(await intents.getPaymentIntent({ id: intent.id }, as), settled.paymentIntent);
        await expectConnectError(
          helpers.settlePaymentAttempt({ id: open.attempt!.id, outcome: "declined" }, as),
          Code.FailedPrecondition,
          `payment attempt ${open.attempt!.id} is succeeded: only a processing or requires_action attempt can be settled`,
        );
        const second = await newIntent(["card"]);
        const held = await helpers.createPaymentAttempt({ id: second.id, outcome: "processing" }, as);
        const declined = await helpers.settlePaymentAttempt({ id: held.attempt!.id, outcome: "declined" }, as);
        assert.equal(declined.attempt?.outcome, "declined");
        assert.equal(declined.paymentIntent?.status, "pending");
        await expectConnectError(helpers.settlePaymentAttempt({ id: "pa_nope", outcome: "succeeded" }, as), Code.NotFound, "payment attempt pa_nope not found");
        await expectConnectError(helpers.settlePaymentAttempt({ id: held.attempt!.id, outcome: "processing" }, as), Code.InvalidArgument, "outcome must be succeeded or declined");
        await expectConnectError(helpers.settlePaymentAttempt({ id: held.attempt!.id, outcome: "succeeded" }), Code.Unauthenticated);
      });

      it("refuses as REST does: InvalidArgument, NotFound, FailedPrecondition, Unauthenticated", async () => {
        const intent = await newIntent(["card"]);
        await expectConnectError(
          helpers.createPaymentAttempt({ id: intent.id, paymentMethod: "ussd", outcome: "succeeded" }, as),
          Code.InvalidArgument,
          `paymentMethod ussd is not allowed for payment intent ${intent.id}: it allows card`,
        );
        await expectConnectError(helpers.createPaymentAttempt({ id: intent.id, outcome: "" }, as), Code.InvalidArgument, "outcome must be one of succeeded, declined, processing");
        await expectConnectError(helpers.createPaymentAttempt({ id: "pi_nope", outcome: "succeeded" }, as), Code.NotFound, "payment intent pi_nope not found");
        await expectConnectError(helpers.createPaymentAttempt({ id: intent.id, outcome: "succeeded" }), Code.Unauthenticated);
        await expectConnectError(helpers.createMerchant({ name: "" }), Code.InvalidArgument, "name must be 1 to 100 characters of text");
        const expired = await helpers.expirePaymentIntent({ id: intent.id }, as);
        assert.equal(expired.status, "expired");
        await expectConnectError(
          helpers.expirePaymentIntent({ id: intent.id }, as),
          Code.FailedPrecondition,
          `payment intent ${intent.id} is expired and can no longer be expired`,
        );
        await expectConnectError(
          helpers.createPaymentAttempt({ id: intent.id, outcome: "succeeded" }, as),
          Code.FailedPrecondition,
          `payment intent ${intent.id} is expired and can no longer be paid`,
        );
      });

      it("reads and advances the test clock; bad seconds are InvalidArgument", async () => {
        const before = timestampDate((await helpers.getClock({}, as)).now!).getTime();
        const after = timestampDate((await helpers.advanceClock({ seconds: 7200n }, as)).now!).getTime();
        assert.ok(after >= before + 7_200_000 && after < before + 7_200_000 + 60_000);
        for (const seconds of [0n, -1n, 315_360_001n]) {
          await expectConnectError(
            helpers.advanceClock({ seconds }, as),
            Code.InvalidArgument,
            "seconds must be a whole number from 1 to 315360000 (ten years)",
          );
        }
        await expectConnectError(helpers.getClock({}), Code.Unauthenticated);
      });

      it("answers Unimplemented for the clock without TEST_CLOCK, and for every helper with TEST_HELPERS=false", async () => {
        const noClock = helpersOf(withoutClock);
        const merchant = await noClock.createMerchant({});
        const key = { headers: { authorization: `Bearer ${merchant.apiKey}` } };
        await expectConnectError(noClock.getClock({}, key), Code.Unimplemented);
        await expectConnectError(noClock.advanceClock({ seconds: 1n }, key), Code.Unimplemented);
        const none = helpersOf(off);
        const acme = { headers: { authorization: "Bearer sk_test_acme_0123456789abcdef" } };
        await expectConnectError(none.createMerchant({}), Code.Unimplemented);
        await expectConnectError(none.createPaymentAttempt({ id: "pi_x", outcome: "succeeded" }, acme), Code.Unimplemented);
        await expectConnectError(none.expirePaymentIntent({ id: "pi_x" }, acme), Code.Unimplemented);
        await expectConnectError(none.settlePaymentAttempt({ id: "pa_x", outcome: "succeeded" }, acme), Code.Unimplemented);
        await expectConnectError(none.getClock({}, acme), Code.Unimplemented);
      });
    });
  }
});
