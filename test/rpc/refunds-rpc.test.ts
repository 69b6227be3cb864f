import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { RefundSchema, RefundService } from "../../gen/payments/v2/refunds_pb.js";
import { paidIntent } from "../support/refund-client.js";
import { createRestClient, expectJson, uniqueReference, type PaymentIntentJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";

const refundIdPattern = /^rf_test_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// The refund cases over every transport; intents are paid through the checkout, as customers do.
for (const protocol of rpcProtocols) {
  describe(`RefundService over ${protocol.name}`, () => {
    let server: TestServer;
    let rest: RestClient;
    let refunds: Client<typeof RefundService>;
    let intents: Client<typeof PaymentIntentService>;
    const as = (merchant = "merchantA", extra: CallOptions = {}): CallOptions => ({ ...extra, headers: { authorization: server.bearer(merchant) } });

    before(async () => {
      server = await startTestServer();
      rest = createRestClient(server);
      const transport = protocol.transport(server.url, []);
      refunds = createClient(RefundService, transport);
      intents = createClient(PaymentIntentService, transport);
    });
    after(() => server.close());

    it("refunds part of a successful intent, and the intent shows amountRefunded", async () => {
      const intent = await paidIntent(rest);
      const headers: Headers[] = [];
      const clientReference = uniqueReference("rpc");
      const refund = await refunds.createRefund(
        { paymentIntentId: intent.id, amount: 2500n, reason: "duplicate", clientReference },
        as("merchantA", { onHeader: (h) => headers.push(h) }),
      );
      assert.match(refund.id, refundIdPattern);
      assert.deepEqual(
        refund,
        create(RefundSchema, {
          id: refund.id,
          paymentIntentId: intent.id,
          amount: 2500n,
          status: "successful",
          reason: "duplicate",
          clientReference,
          createdAt: refund.createdAt,
          updatedAt: refund.updatedAt,
          livemode: false,
        }),
      );
      assert.equal(refund.failureReason, undefined);
      assert.equal(headers[0]?.get("idempotent-replayed"), null);
      const read = await intents.getPaymentIntent({ id: intent.id }, as());
      assert.deepEqual([read.status, read.amountRefunded], ["successful", 2500n]);
      assert.deepEqual(await refunds.getRefund({ id: refund.id }, as()), refund);
    });

    it("replays the same clientReference and request with the idempotent-replayed header, and refuses another request with AlreadyExists", async () => {
      const intent = await paidIntent(rest);
      const request = { paymentIntentId: intent.id, amount: 1000n, clientReference: uniqueReference("rpc") };
      const first = await refunds.createRefund(request, as());
      const headers: Headers[] = [];
      const again = await refunds.createRefund(request, as("merchantA", { onHeader: (h) => headers.push(h) }));
      assert.deepEqual(again, first);
      assert.equal(headers[0]?.get("idempotent-replayed"), "true");
      await expectConnectError(
        refunds.createRefund({ ...request, amount: 1001n }, as()),
        Code.AlreadyExists,
        `clientReference ${request.clientReference} is already used by refund ${first.id} with a different request`,
      );
      assert.equal((await intents.getPaymentIntent({ id: intent.id }, as())).amountRefunded, 1000n);
    });

    it("refunds what is left without an amount, then refuses more with FailedPrecondition", async () => {
      const intent = await paidIntent(rest, { amount: 6000 });
      await refunds.createRefund({ paymentIntentId: intent.id, amount: 1000n, clientReference: uniqueReference("rpc") }, as());
      const rest5000 = await refunds.createRefund({ paymentIntentId: intent.id, clientReference: uniqueReference("rpc") }, as());
      assert.deepEqual([rest5000.amount, rest5000.reason], [5000n, "requested_by_customer"]);
      await expectConnectError(
        refunds.createRefund({ paymentIntentId: intent.id, amount: 1n, clientReference: uniqueReference("rpc") }, as()),
        Code.FailedPrecondition,
        `payment intent ${intent.id} is refunded in full already`,
      );
    });

    it("refuses an intent that is not successful, another merchant's intent and bad input with the RPC codes", async () => {
      const pending = expectJson<PaymentIntentJson>(
        await rest.createIntent({ amount: 5000, customerEmail: "ada@example.com", clientReference: uniqueReference("pi") }),
        201,
      );
      await expectConnectError(
        refunds.createRefund({ paymentIntentId: pending.id, clientReference: uniqueReference("rpc") }, as()),
        Code.FailedPrecondition,
        `payment intent ${pending.id} is pending: only a successful payment intent can be refunded`,
      );
      const intent = await paidIntent(rest);
      await expectConnectError(
        refunds.createRefund({ paymentIntentId: intent.id, clientReference: uniqueReference("rpc") }, as("merchantB")),
        Code.NotFound,
        `payment intent ${intent.id} not found`,
      );
      await expectConnectError(
        refunds.createRefund({ paymentIntentId: intent.id, reason: "payment_after_close", clientReference: uniqueReference("rpc") }, as()),
        Code.InvalidArgument,
        "reason must be one of requested_by_customer, duplicate, fraudulent",
      );
      await expectConnectError(refunds.createRefund({ paymentIntentId: intent.id, clientReference: "" }, as()), Code.InvalidArgument, "clientReference is required");
      await expectConnectError(refunds.createRefund({ paymentIntentId: "", clientReference: "x" }, as()), Code.InvalidArgument, "paymentIntentId is required");
      await expectConnectError(refunds.createRefund({ paymentIntentId: intent.id, amount: 0n, clientReference: "x" }, as()), Code.InvalidArgument, /^amount must be/);
      await expectConnectError(refunds.getRefund({ id: "rf_nope" }, as()), Code.NotFound, "refund rf_nope not found");
      await expectConnectError(refunds.createRefund({ paymentIntentId: intent.id, clientReference: "x" }, {}), Code.Unauthenticated);
      assert.equal((await intents.getPaymentIntent({ id: intent.id }, as())).amountRefunded, 0n);
    });

    it("lists an intent's refunds newest first, paged, and another merchant's read is NotFound", async () => {
      const intent = await paidIntent(rest);
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await refunds.createRefund({ paymentIntentId: intent.id, amount: 100n, clientReference: uniqueReference("rpc") }, as()));
      const first = await refunds.listRefunds({ paymentIntentId: intent.id, pageSize: 2 }, as());
      assert.deepEqual(first.refunds.map((r) => r.id), [made[2]!.id, made[1]!.id]);
      assert.ok(timestampDate(first.refunds[0]!.createdAt!) >= timestampDate(first.refunds[1]!.createdAt!));
      const second = await refunds.listRefunds({ paymentIntentId: intent.id, pageSize: 2, pageToken: first.nextPageToken }, as());
      assert.deepEqual(second.refunds.map((r) => r.id), [made[0]!.id]);
      assert.equal(second.nextPageToken, "");
      await expectConnectError(refunds.listRefunds({ paymentIntentId: intent.id }, as("merchantB")), Code.NotFound);
      await expectConnectError(refunds.getRefund({ id: made[0]!.id }, as("merchantB")), Code.NotFound, `refund ${made[0]!.id} not found`);
    });
  });
}
