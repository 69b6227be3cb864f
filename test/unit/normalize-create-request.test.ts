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
    });
  });

  it("keeps what the client gave", () => {
    const normalized = normalizeCreateRequest(
      request({
        currency: "NGN",
        receiptEmail: "accounts@example.com",
        paymentMethod: ["paystack", "card"],
        callbackUrl: "https://shop.example.com/return",
        settlementAccounts: [{ $typeName: "payments.v2.SettlementSplit", settlementAccountId: "sa_1", splitAmount: 50000n }],
      }),
      catalogue,
    );
    assert.equal(normalized.currency, "NGN");
    assert.equal(normalized.receiptEmail, "accounts@example.com");
    assert.deepEqual(normalized.paymentMethods, ["paystack", "card"]);
    assert.equal(normalized.callbackUrl, "https://shop.example.com/return");
    assert.deepEqual(normalized.splits, [{ settlementAccountId: "sa_1", splitAmount: 50000n }]);
  });

  it("hands out its own copy of the method list", () => {
    normalizeCreateRequest(request(), catalogue).paymentMethods.push("mutated");
    assert.deepEqual(catalogue.names, ["card", "bank_transfer", "ussd", "paystack"]);
    assert.deepEqual(normalizeCreateRequest(request(), catalogue).paymentMethods, ["card", "bank_transfer", "ussd", "paystack"]);
  });

  const refused: { name: string; fields: Fields; field: string }[] = [
    { name: "amount 0", fields: { amount: 0n }, field: "amount" },
    { name: "amount over 1,000,000,000,000", fields: { amount: 1_000_000_000_001n }, field: "amount" },
    { name: "a missing customerEmail", fields: { customerEmail: "" }, field: "customerEmail" },
    { name: "an invalid customerEmail", fields: { customerEmail: "ada@" }, field: "customerEmail" },
    { name: "currency USD", fields: { currency: "USD" }, field: "currency" },
    { name: "a missing clientReference", fields: { clientReference: "" }, field: "clientReference" },
    { name: "an invalid receiptEmail", fields: { receiptEmail: "not-an-email" }, field: "receiptEmail" },
    { name: "an unknown payment method", fields: { paymentMethod: ["card", "cash"] }, field: "paymentMethod[1]" },
    { name: "a relative callbackUrl", fields: { callbackUrl: "/return" }, field: "callbackUrl" },
    {
      name: "splits over the amount",
      fields: { settlementAccounts: [{ $typeName: "payments.v2.SettlementSplit", settlementAccountId: "sa_1", splitAmount: 50001n }] },
      field: "settlementAccounts",
    },
  ];
  for (const { name, fields, field } of refused) {
    it(`refuses ${name}, naming ${field}`, () => {
      assert.throws(
        () => normalizeCreateRequest(request(fields), catalogue),
        (error: unknown) => error instanceof ConnectError && error.code === Code.InvalidArgument && error.rawMessage.startsWith(field),
      );
    });
  }
});
