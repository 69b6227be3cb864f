import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate, TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  DeletePaymentIntentResponseSchema,
  ListPaymentIntentsResponseSchema,
  PaymentIntentListItemSchema,
  PaymentIntentSchema,
} from "../../gen/payments/v2/payment_intent_pb.js";
import { SettlementAccountSchema } from "../../gen/payments/v2/settlement_account_pb.js";
import type { DescMessage } from "@bufbuild/protobuf";
import { createRestEncoders } from "../../src/protocols/rest/encode-json.js";

const encoders = createRestEncoders();
/** The REST JSON of a message, parsed back: what a client reads. */
const encodeRestJson = (schema: DescMessage, message: object): Record<string, unknown> =>
  JSON.parse(encoders.encoderFor(schema)(message)) as Record<string, unknown>;

const createdAt = timestampFromDate(new Date("2024-05-01T10:00:00.000Z"));
const updatedAt = timestampFromDate(new Date("2024-05-01T10:00:01.050Z"));

const intentFields = {
  id: "pi_1",
  amount: 50000n,
  totalAmount: 1_000_000_000_000n,
  currency: "NGN",
  receiptEmail: "ada@example.com",
  customerEmail: "ada@example.com",
  country: "NG",
  status: "pending",
  checkoutLink: "http://127.0.0.1:8080/checkout/tok",
  clientReference: "order-1",
};

const intentJson = {
  id: "pi_1",
  amount: "50000",
  totalAmount: "1000000000000",
  currency: "NGN",
  receiptEmail: "ada@example.com",
  customerEmail: "ada@example.com",
  country: "NG",
  status: "pending",
  checkoutLink: "http://127.0.0.1:8080/checkout/tok",
  clientReference: "order-1",
};

describe("createRestEncoders", () => {
  it("renders an intent with null for unset optional and message fields and [] for empty lists", () => {
    const message = create(PaymentIntentSchema, intentFields);
    assert.deepEqual(encodeRestJson(PaymentIntentSchema, message), {
      ...intentJson,
      paymentMethods: [],
      callbackUrl: null,
      transaction: null,
      meta: [],
      settlementAccounts: [],
      createdAt: null,
      updatedAt: null,
      amountRefunded: null,
      nextAction: null,
      // An optional bool left unset renders null, as every field with presence.
      livemode: null,
    });
  });

  it("renders set fields: int64 as strings, nested messages, timestamps with milliseconds", () => {
    const message = create(PaymentIntentSchema, {
      ...intentFields,
      paymentMethods: [{ id: "pm_card", type: "card", attributes: [{ name: "Visa" }] }, { id: "pm_ussd", type: "ussd" }],
      callbackUrl: "https://shop.example.com/return",
      transaction: "",
      meta: [{ name: "order_id", value: "A-1001" }],
      settlementAccounts: [{ settlementAccountId: "sa_1", splitAmount: 9_007_199_254_740_993n }],
      createdAt,
      updatedAt,
      amountRefunded: 0n,
    });
    assert.deepEqual(encodeRestJson(PaymentIntentSchema, message), {
      ...intentJson,
      paymentMethods: [
        { id: "pm_card", type: "card", attributes: [{ name: "Visa" }] },
        { id: "pm_ussd", type: "ussd", attributes: [] },
      ],
      callbackUrl: "https://shop.example.com/return",
      // An optional field set to its zero value is still present.
      transaction: "",
      meta: [{ name: "order_id", value: "A-1001" }],
      settlementAccounts: [{ settlementAccountId: "sa_1", splitAmount: "9007199254740993" }],
      createdAt: "2024-05-01T10:00:00.000Z",
      updatedAt: "2024-05-01T10:00:01.050Z",
      // An optional int64 set to 0 is present, as a string: amountRefunded is "0" before any refund.
      amountRefunded: "0",
      nextAction: null,
      livemode: null,
    });
  });

  it("renders a list item's settlementAccount as null when unset and as an object when set", () => {
    const unset = create(PaymentIntentListItemSchema, { ...intentFields, createdAt, updatedAt });
    assert.equal(encodeRestJson(PaymentIntentListItemSchema, unset)["settlementAccount"], null);
    assert.equal("settlementAccounts" in encodeRestJson(PaymentIntentListItemSchema, unset), false);

    const account = { id: "sa_1", accountName: "Ada", accountNumber: "0123456789", bankName: "Zenith Bank", bankCode: "057", createdAt, updatedAt };
    const set = create(PaymentIntentListItemSchema, { ...intentFields, settlementAccount: account, createdAt, updatedAt });
    assert.deepEqual(encodeRestJson(PaymentIntentListItemSchema, set)["settlementAccount"], {
      ...account,
      createdAt: "2024-05-01T10:00:00.000Z",
      updatedAt: "2024-05-01T10:00:01.050Z",
      livemode: null,
    });
  });

  const timestamps: { name: string; seconds: bigint; nanos: number; want: string }[] = [
    { name: "a whole second", seconds: 1714557600n, nanos: 0, want: "2024-05-01T10:00:00.000Z" },
    { name: "whole milliseconds", seconds: 1714557600n, nanos: 120_000_000, want: "2024-05-01T10:00:00.120Z" },
    { name: "microseconds, cut to milliseconds", seconds: 1714557600n, nanos: 123_456_789, want: "2024-05-01T10:00:00.123Z" },
    { name: "one nanosecond", seconds: 1714557600n, nanos: 1, want: "2024-05-01T10:00:00.000Z" },
    { name: "the epoch", seconds: 0n, nanos: 0, want: "1970-01-01T00:00:00.000Z" },
  ];
  for (const { name, seconds, nanos, want } of timestamps) {
    it(`renders a timestamp at ${name} as ${want}`, () => {
      const message = create(SettlementAccountSchema, { createdAt: create(TimestampSchema, { seconds, nanos }) });
      assert.equal(encodeRestJson(SettlementAccountSchema, message)["createdAt"], want);
    });
  }

  it("leaves out plain scalars at their zero value, as proto3 JSON does", () => {
    const empty = create(ListPaymentIntentsResponseSchema, {});
    assert.deepEqual(encodeRestJson(ListPaymentIntentsResponseSchema, empty), { paymentIntents: [] });
    const more = create(ListPaymentIntentsResponseSchema, { nextPageToken: "abc.def" });
    assert.deepEqual(encodeRestJson(ListPaymentIntentsResponseSchema, more), { paymentIntents: [], nextPageToken: "abc.def" });
  });

  it("renders int32 as a JSON number", () => {
    const message = create(DeletePaymentIntentResponseSchema, { status: 200, title: "OK", message: "Payment intent pi_1 deleted" });
    assert.deepEqual(encodeRestJson(DeletePaymentIntentResponseSchema, message), {
      status: 200,
      title: "OK",
      message: "Payment intent pi_1 deleted",
    });
  });
});
