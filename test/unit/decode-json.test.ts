import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { CreatePaymentIntentRequestSchema, ListPaymentIntentsRequestSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import { decodeRestJson } from "../../src/protocols/decode-json.js";
import { paymentMethodAdapter } from "../../src/protocols/rest/payment-method-adapter.js";

const adapters = new Map([paymentMethodAdapter]);
const decodeCreate = (json: unknown) => decodeRestJson(CreatePaymentIntentRequestSchema, json, adapters);

/** Asserts an InvalidArgument with exactly this message. */
function assertInvalid(run: () => unknown, message: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ConnectError, `not a ConnectError: ${String(error)}`);
    assert.equal(error.code, Code.InvalidArgument);
    assert.equal(error.rawMessage, message);
    return true;
  });
}

describe("decodeRestJson", () => {
  const accepted: { name: string; body: string; want: Record<string, unknown> }[] = [
    { name: "an integer amount", body: '{"amount": 50000}', want: { amount: 50000n } },
    { name: "an integer written with an exponent", body: '{"amount": 5e4}', want: { amount: 50000n } },
    { name: "the largest safe integer", body: '{"amount": 9007199254740991}', want: { amount: 9007199254740991n } },
    { name: "strings", body: '{"customerEmail": "ada@example.com", "currency": "NGN"}', want: { customerEmail: "ada@example.com", currency: "NGN" } },
    { name: "null as absent", body: '{"amount": null, "callbackUrl": null, "settlementAccounts": null}', want: {} },
    { name: "payment methods as names", body: '{"paymentMethod": ["card", "ussd"]}', want: { paymentMethod: ["card", "ussd"] } },
    { name: "payment methods as {type} objects", body: '{"paymentMethod": [{"type": "card"}, "ussd"]}', want: { paymentMethod: ["card", "ussd"] } },
    {
      name: "nested split messages",
      body: '{"settlementAccounts": [{"settlementAccountId": "sa_1", "splitAmount": 100}]}',
      want: { settlementAccounts: [{ settlementAccountId: "sa_1", splitAmount: 100n }] },
    },
    { name: "an empty object", body: "{}", want: {} },
  ];
  for (const { name, body, want } of accepted) {
    it(`accepts ${name}`, () => {
      assert.deepEqual(decodeCreate(JSON.parse(body)), want);
    });
  }

  const refused: { name: string; body: string; message: string }[] = [
    { name: "an array body", body: "[]", message: "request body must be a JSON object" },
    { name: "a string body", body: '"amount"', message: "request body must be a JSON object" },
    { name: "a number body", body: "1", message: "request body must be a JSON object" },
    { name: "a null body", body: "null", message: "request body must be a JSON object" },
    { name: "amount as a string", body: '{"amount": "50000"}', message: "amount must be an integer, but a string was sent: write the number without quotes" },
    { name: "amount as a boolean", body: '{"amount": true}', message: "amount must be an integer" },
    { name: "a fractional amount", body: '{"amount": 500.5}', message: "amount must be an integer" },
    { name: "amount as an object", body: '{"amount": {}}', message: "amount must be an integer" },
    { name: "amount beyond 2^53", body: '{"amount": 9007199254740993}', message: "amount must be an integer of at most 2^53-1" },
    { name: "a number for a string", body: '{"customerEmail": 5}', message: "customerEmail must be a string" },
    { name: "a boolean for a string", body: '{"clientReference": false}', message: "clientReference must be a string" },
    { name: "an unknown field", body: '{"amount": 1, "fee": 2}', message: "unknown field fee" },
    { name: "a proto field name instead of the JSON name", body: '{"customer_email": "ada@example.com"}', message: "unknown field customer_email" },
    { name: "a field that differs in case", body: '{"Amount": 1}', message: "unknown field Amount" },
    { name: "__proto__", body: '{"__proto__": {"amount": 1}}', message: "unknown field __proto__" },
    { name: "a list that is not an array", body: '{"paymentMethod": "card"}', message: "paymentMethod must be an array" },
    { name: "a null list item", body: '{"paymentMethod": [null]}', message: "paymentMethod[0] must not be null" },
    { name: "a number as a payment method", body: '{"paymentMethod": ["card", 1]}', message: "paymentMethod[1] must be a string" },
    { name: "a payment method object with another key", body: '{"paymentMethod": [{"type": "card", "id": "x"}]}', message: "unknown field paymentMethod[0].id" },
    { name: "a payment method object without a type string", body: '{"paymentMethod": [{"type": 1}]}', message: "paymentMethod[0].type must be a string" },
    { name: "splits as an object", body: '{"settlementAccounts": {}}', message: "settlementAccounts must be an array" },
    { name: "a split that is not an object", body: '{"settlementAccounts": ["sa_1"]}', message: "settlementAccounts[0] must be an object" },
    { name: "a split that is an array", body: '{"settlementAccounts": [[]]}', message: "settlementAccounts[0] must be an object" },
    {
      name: "a split amount as a string",
      body: '{"settlementAccounts": [{"settlementAccountId": "sa_1", "splitAmount": "100"}]}',
      message: "settlementAccounts[0].splitAmount must be an integer, but a string was sent: write the number without quotes",
    },
    {
      name: "an unknown field in a split",
      body: '{"settlementAccounts": [{"settlementAccountId": "sa_1", "splitAmount": 1}, {"accountId": "sa_2"}]}',
      message: "unknown field settlementAccounts[1].accountId",
    },
  ];
  for (const { name, body, message } of refused) {
    it(`refuses ${name}`, () => {
      assertInvalid(() => decodeCreate(JSON.parse(body)), message);
    });
  }

  const int32Cases: { body: string; want?: number; message?: string }[] = [
    { body: '{"pageSize": 10}', want: 10 },
    { body: '{"pageSize": -2147483648}', want: -2147483648 },
    { body: '{"pageSize": 2147483648}', message: "pageSize must be an integer" },
    { body: '{"pageSize": 1.5}', message: "pageSize must be an integer" },
    { body: '{"pageSize": "10"}', message: "pageSize must be an integer, but a string was sent: write the number without quotes" },
  ];
  for (const { body, want, message } of int32Cases) {
    it(`${message ? "refuses" : "accepts"} the int32 ${body}`, () => {
      const run = () => decodeRestJson(ListPaymentIntentsRequestSchema, JSON.parse(body));
      if (message) assertInvalid(run, message);
      else assert.deepEqual(run(), { pageSize: want });
    });
  }
});
