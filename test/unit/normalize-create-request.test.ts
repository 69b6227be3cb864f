import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { CreatePaymentIntentRequestSchema, type CreatePaymentIntentRequest } from "../../gen/payments/v2/payment_intent_pb.js";
import { normalizeCreateRequest } from "../../src/service/normalize-create-request.js";
import { createPaymentMethodCatalogue } from "../../src/service/payment-method-catalogue.js";

const catalogue = createPaymentMethodCatalogue(["paystack"]);
const minimal = { amount: 50000n, customerEmail: "ada@example.com", clientReference: "order-1" };
type Fields = Partial<Omit<CreatePaymentIntentRequest, "$typeName" | "$unknown">>;
const request = (fields: Fields = {}) => create(CreatePaymentIntentRequestSchema, { ...minimal, ...fields });

describe("normalizeCreateRequest", () => {
  it("fills in the defaults: NGN, receipt to the customer, every enabled method, no callback, no splits", () => {
    assert.deepEqual(normalizeCreateRequest(request(), catalogue), {
      amount: 50000n,
      currency: "NGN",
      customerEmail: "ada@example.com",
      receiptEmail: "ada@example.com",
      clientReference: "order-1",
      paymentMethods: ["card", "bank_transfer", "ussd", "paystack"],
      callbackUrl: null,
      splits: [],
      meta: [],
    });
  });

  it("keeps what the client gave", () => {
    const normalized = normalizeCreateRequest(
      request({
        currency: "NGN",
        receiptEmail: "accounts@example.com",
        paymentMethod: ["ussd", "card"],
        callbackUrl: "https://shop.example.com/return",
        settlementAccounts: [{ $typeName: "payments.v2.SettlementSplit", settlementAccountId: "sa_1", splitAmount: 50000n }],
      }),
      catalogue,
    );
    assert.equal(normalized.currency, "NGN");
    assert.equal(normalized.receiptEmail, "accounts@example.com");
    assert.deepEqual(normalized.paymentMethods, ["ussd", "card"]);
    assert.equal(normalized.callbackUrl, "https://shop.example.com/return");
    assert.deepEqual(normalized.splits, [{ settlementAccountId: "sa_1", splitAmount: 50000n }]);
  });

  it("hands out its own copy of the method list", () => {
    normalizeCreateRequest(request(), catalogue).paymentMethods.push("mutated");
    assert.deepEqual(catalogue.names, ["card", "bank_transfer", "ussd", "paystack"]);
    assert.deepEqual(normalizeCreateRequest(request(), catalogue).paymentMethods, ["card", "bank_transfer", "ussd", "paystack"]);
  });

  // The field rules (bounds, formats, counts) run before, in the pipeline: test/unit/request-checker.test.ts.
  const split = (settlementAccountId: string, splitAmount: bigint) => ({ $typeName: "payments.v2.SettlementSplit" as const, settlementAccountId, splitAmount });
  const refused: { name: string; fields: Fields; field: string }[] = [
    { name: "an unknown payment method", fields: { paymentMethod: ["card", "cash"] }, field: "paymentMethod[1]" },
    { name: "one account split twice", fields: { settlementAccounts: [split("sa_1", 1n), split("sa_1", 2n)] }, field: "settlementAccounts[1].settlementAccountId" },
    { name: "splits over the amount", fields: { settlementAccounts: [split("sa_1", 50001n)] }, field: "settlementAccounts" },
    { name: "paystack with settlement splits", fields: { paymentMethod: ["card", "paystack"], settlementAccounts: [split("sa_1", 1n)] }, field: "paymentMethod[1]" },
  ];
  for (const { name, fields, field } of refused) {
    it(`refuses ${name}, naming ${field}`, () => {
      assert.throws(
        () => normalizeCreateRequest(request(fields), catalogue),
        (error: unknown) => error instanceof ConnectError && error.code === Code.InvalidArgument && error.rawMessage.startsWith(field),
      );
    });
  }

  it("refuses paystack with splits, saying so; by default, with splits, offers every method but paystack", () => {
    assert.throws(
      () => normalizeCreateRequest(request({ paymentMethod: ["paystack"], settlementAccounts: [split("sa_1", 1n)] }), catalogue),
      (error: unknown) =>
        error instanceof ConnectError &&
        error.rawMessage === 'paymentMethod[0]: "paystack" cannot collect an intent with settlementAccounts: its split accounts are not mapped yet',
    );
    assert.deepEqual(normalizeCreateRequest(request({ settlementAccounts: [split("sa_1", 1n)] }), catalogue).paymentMethods, ["card", "bank_transfer", "ussd"]);
  });

  it("refuses paystack where it is not configured, saying so rather than calling it unknown", () => {
    const without = createPaymentMethodCatalogue(["opay"]);
    assert.equal(without.notConfigured("paystack"), true);
    assert.equal(without.notConfigured("cash"), false);
    assert.throws(
      () => normalizeCreateRequest(request({ paymentMethod: ["card", "paystack"] }), without),
      (error: unknown) =>
        error instanceof ConnectError &&
        error.code === Code.InvalidArgument &&
        error.rawMessage === 'paymentMethod[1]: the payment processor "paystack" is not configured on this service',
    );
  });
});
