import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import {
  CreatePaymentIntentRequestSchema,
  PaymentIntentSchema,
  type CreatePaymentIntentRequest,
  type PaymentIntent,
} from "../../gen/payments/v2/payment_intent_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { checkoutTokenSource } from "../../src/lib/checkout-token.js";

// @grpc/grpc-js shares no code with connect-node, so it checks the gRPC side
// of the server against an independent implementation of the protocol.
const createPath = "/payments.v2.PaymentIntentService/CreatePaymentIntent";

interface UnaryOutcome {
  error: grpc.ServiceError | null;
  response: PaymentIntent | undefined;
  header: grpc.Metadata | undefined;
}

describe("gRPC with @grpc/grpc-js", () => {
  let server: TestServer;
  let client: grpc.Client;

  before(async () => {
    server = await startTestServer();
    const Client = grpc.makeGenericClientConstructor({}, "PaymentIntentService");
    client = new Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
  });

  function createPaymentIntent(
    init: MessageInitShape<typeof CreatePaymentIntentRequestSchema>,
    authorization?: string,
  ): Promise<UnaryOutcome> {
    const metadata = new grpc.Metadata();
    if (authorization !== undefined) metadata.set("authorization", authorization);
    return new Promise((resolve) => {
      let header: grpc.Metadata | undefined;
      const call = client.makeUnaryRequest<CreatePaymentIntentRequest, PaymentIntent>(
        createPath,
        (message) => Buffer.from(toBinary(CreatePaymentIntentRequestSchema, message)),
        (bytes) => fromBinary(PaymentIntentSchema, bytes),
        create(CreatePaymentIntentRequestSchema, init),
        metadata,
        { deadline: Date.now() + 5000 },
        (error, response) => resolve({ error, response, header }),
      );
      call.on("metadata", (received) => {
        header = received;
      });
    });
  }

  it("creates a payment intent", async () => {
    const startedAt = Date.now();
    const request = {
      amount: 250000n,
      customerEmail: "ada@example.com",
      clientReference: "grpc-js-1",
      paymentMethod: ["bank_transfer"],
    };
    const { error, response, header } = await createPaymentIntent(request, server.bearer());
    assert.equal(error, null);
    assert.ok(response);
    assert.match(response.id, /^pi_test_[0-9a-f-]{36}$/);
    assert.match(response.checkoutLink, new RegExp(`^${server.url}/checkout/${checkoutTokenSource}$`));
    assert.ok(timestampDate(response.createdAt!).getTime() >= startedAt);
    assert.deepEqual(
      response,
      create(PaymentIntentSchema, {
        id: response.id,
        amount: 250000n,
        totalAmount: 250000n,
        currency: "NGN",
        receiptEmail: "ada@example.com",
        customerEmail: "ada@example.com",
        country: "NG",
        status: "pending",
        checkoutLink: response.checkoutLink,
        clientReference: "grpc-js-1",
        paymentMethods: [{ id: "pm_bank_transfer", type: "bank_transfer", attributes: [{ name: "Virtual account" }] }],
        createdAt: response.createdAt,
        updatedAt: response.createdAt,
        amountRefunded: 0n,
        livemode: false,
      }),
    );
    assert.deepEqual(header?.get("idempotent-replayed"), []);

    // The intent is the one REST sees.
    const rest = await fetch(`${server.restUrl}/v2/payment-intents?clientReference=grpc-js-1`, {
      headers: { authorization: server.bearer() },
    });
    const listed = (await rest.json()) as { paymentIntents: { id: string }[] };
    assert.deepEqual(
      listed.paymentIntents.map((p) => p.id),
      [response.id],
    );

    const replay = await createPaymentIntent(request, server.bearer());
    assert.equal(replay.error, null);
    assert.equal(replay.response?.id, response.id);
    assert.deepEqual(replay.header?.get("idempotent-replayed"), ["true"]);
  });

  it("fails with INVALID_ARGUMENT and the field's message for an invalid amount", async () => {
    const { error } = await createPaymentIntent(
      { amount: 0n, customerEmail: "ada@example.com", clientReference: "grpc-js-zero" },
      server.bearer(),
    );
    assert.equal(error?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(error?.details, "amount must be an integer from 1 to 1000000000000 (kobo)");
  });

  const unauthenticated: { name: string; authorization?: string; details: string }[] = [
    { name: "without a key", details: "missing Authorization header: send 'Authorization: Bearer <api key>'" },
    { name: "with an unknown key", authorization: "Bearer sk_test_unknown", details: "API key is not valid" },
  ];
  for (const { name, authorization, details } of unauthenticated) {
    it(`fails with UNAUTHENTICATED (16) ${name}`, async () => {
      const { error, response } = await createPaymentIntent(
        { amount: 500n, customerEmail: "ada@example.com", clientReference: "grpc-js-nokey" },
        authorization,
      );
      assert.equal(response, undefined);
      assert.equal(error?.code, grpc.status.UNAUTHENTICATED);
      assert.equal(error?.code, 16);
      assert.equal(error?.details, details);
    });
  }

  it("reads a message with , ; : and non-ASCII exactly as the server wrote it", async () => {
    const reference = "grpc-js-reused";
    const first = await createPaymentIntent({ amount: 500n, customerEmail: "ada@example.com", clientReference: reference }, server.bearer());
    assert.equal(first.error, null);
    // A different request with the same reference: the message has ":"-free text with ";".
    const { error } = await createPaymentIntent({ amount: 501n, customerEmail: "ada@example.com", clientReference: reference }, server.bearer());
    assert.equal(error?.code, grpc.status.ALREADY_EXISTS);
    assert.equal(
      error?.details,
      `clientReference ${reference} is already used by payment intent ${first.response!.id} with a different request`,
    );
    // Commas, a colon and a semicolon, and a character outside ASCII, in one message.
    const bad = await createPaymentIntent(
      { amount: 500n, customerEmail: "ada@example.com", clientReference: "grpc-js-nul", settlementAccounts: [{ settlementAccountId: "naïra,x;y:z", splitAmount: 1n }] },
      server.bearer(),
    );
    assert.equal(bad.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(bad.error?.details, "settlementAccounts[0].settlementAccountId: no settlement account naïra,x;y:z");
  });
});
