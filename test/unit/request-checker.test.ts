import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ServerReflectionRequestSchema } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ListEventsRequestSchema, StreamEventsRequestSchema } from "../../gen/payments/v2/events_pb.js";
import { CreatePaymentIntentRequestSchema, ListPaymentIntentsRequestSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import { CreateSettlementAccountRequestSchema, ListSettlementAccountsRequestSchema } from "../../gen/payments/v2/settlement_account_pb.js";
import { AdvanceClockRequestSchema, CreateMerchantRequestSchema, CreatePaymentAttemptRequestSchema } from "../../gen/payments/v2/test_helpers_pb.js";
import { CreateWebhookEndpointRequestSchema, ListWebhookDeliveriesRequestSchema } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import { createContractRuleReader } from "../../src/rules/contract-rules.js";
import { createRequestChecker } from "../../src/rules/request-checker.js";

const checker = createRequestChecker({ rules: createContractRuleReader() });

/** Runs the checker on a message made from init; returns the refusal's message, or the message as checked. */
function check(schema: DescMessage, init: Record<string, unknown>): { refused: string } | { passed: Record<string, unknown> } {
  const message = create(schema, init as never);
  try {
    checker.checkFor(schema)(message);
  } catch (error) {
    assert.ok(error instanceof ConnectError && error.code === Code.InvalidArgument, String(error));
    return { refused: error.rawMessage };
  }
  return { passed: message as unknown as Record<string, unknown> };
}

const intent = (fields: Record<string, unknown> = {}) => ({ amount: 50000n, customerEmail: "ada@example.com", clientReference: "order-1", ...fields });
const split = (settlementAccountId: string, splitAmount: bigint) => ({ settlementAccountId, splitAmount });
const account = (fields: Record<string, unknown> = {}) => ({ accountName: "Ada Stores", accountNumber: "0123456789", bankName: "Example Bank", bankCode: "058", ...fields });
const endpoint = (fields: Record<string, unknown> = {}) => ({ url: "https://hooks.example.com/x", ...fields });

const badUrl = "url must be an absolute http or https URL of at most 2048 characters";

// The messages the services gave before the rules moved into the proto, kept (docs/api.md, "Errors").
const refusals: [string, DescMessage, Record<string, unknown>, string][] = [
  ["amount 0", CreatePaymentIntentRequestSchema, intent({ amount: 0n }), "amount must be an integer from 1 to 1000000000000 (kobo)"],
  ["amount over 1e12", CreatePaymentIntentRequestSchema, intent({ amount: 1_000_000_000_001n }), "amount must be an integer from 1 to 1000000000000 (kobo)"],
  ["no customerEmail", CreatePaymentIntentRequestSchema, intent({ customerEmail: "" }), "customerEmail is required"],
  ["customerEmail without a dot", CreatePaymentIntentRequestSchema, intent({ customerEmail: "ada@localhost" }), "customerEmail must be a valid email address of at most 254 characters"],
  ["a local part of 65", CreatePaymentIntentRequestSchema, intent({ customerEmail: `${"a".repeat(65)}@example.com` }), "customerEmail must be a valid email address of at most 254 characters"],
  ["currency USD", CreatePaymentIntentRequestSchema, intent({ currency: "USD" }), "currency: only NGN is supported"],
  ["no clientReference", CreatePaymentIntentRequestSchema, intent({ clientReference: "" }), "clientReference is required"],
  ["clientReference with a space", CreatePaymentIntentRequestSchema, intent({ clientReference: "order 1" }), "clientReference must be 1 to 100 characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'"],
  ["clientReference of 101", CreatePaymentIntentRequestSchema, intent({ clientReference: "r".repeat(101) }), "clientReference must be 1 to 100 characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'"],
  ["receiptEmail invalid", CreatePaymentIntentRequestSchema, intent({ receiptEmail: "not-an-email" }), "receiptEmail must be a valid email address of at most 254 characters"],
  ["11 methods", CreatePaymentIntentRequestSchema, intent({ paymentMethod: Array(11).fill("card") }), "paymentMethod may list at most 10 methods"],
  [
    "a method name in capitals",
    CreatePaymentIntentRequestSchema,
    intent({ paymentMethod: ["Card"] }),
    "paymentMethod[0] is an unknown payment method: a name is 1 to 32 characters of a-z, 0-9 and '_', starting with a letter",
  ],
  ["a method twice", CreatePaymentIntentRequestSchema, intent({ paymentMethod: ["card", "ussd", "card"] }), 'paymentMethod[2]: "card" is listed twice'],
  ["a relative callbackUrl", CreatePaymentIntentRequestSchema, intent({ callbackUrl: "/return" }), "callbackUrl must be an absolute http or https URL of at most 2048 characters"],
  ["an empty callbackUrl", CreatePaymentIntentRequestSchema, intent({ callbackUrl: "" }), "callbackUrl must be an absolute http or https URL of at most 2048 characters"],
  ["a callbackUrl host with ;", CreatePaymentIntentRequestSchema, intent({ callbackUrl: "https://shop;x.example/" }), "callbackUrl must name its host as a DNS name or an IP address"],
  ["a callbackUrl with a user", CreatePaymentIntentRequestSchema, intent({ callbackUrl: "https://ada@shop.example/" }), "callbackUrl must not carry credentials"],
  ["11 splits", CreatePaymentIntentRequestSchema, intent({ settlementAccounts: Array(11).fill(split("sa_1", 1n)) }), "settlementAccounts may list at most 10 accounts"],
  ["a split without account", CreatePaymentIntentRequestSchema, intent({ settlementAccounts: [split("sa_1", 1n), split("", 1n)] }), "settlementAccounts[1].settlementAccountId is required"],
  ["a split of 0", CreatePaymentIntentRequestSchema, intent({ settlementAccounts: [split("sa_1", 0n)] }), "settlementAccounts[0].splitAmount must be an integer from 1 to 1000000000000 (kobo)"],
  ["pageSize 0", ListPaymentIntentsRequestSchema, { pageSize: 0 }, "pageSize must be an integer from 1 to 100"],
  ["pageSize 101", ListSettlementAccountsRequestSchema, { pageSize: 101 }, "pageSize must be an integer from 1 to 100"],
  ["an unknown status", ListPaymentIntentsRequestSchema, { status: "paid" }, "status must be one of pending, processing, requires_action, successful, failed, expired, cancelled"],
  ["a bad reference filter", ListPaymentIntentsRequestSchema, { clientReference: "a/b" }, "clientReference must be 1 to 100 characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'"],
  ["a blank accountName", CreateSettlementAccountRequestSchema, account({ accountName: "   " }), "accountName must be 1 to 100 characters of text"],
  ["an accountName with a newline", CreateSettlementAccountRequestSchema, account({ accountName: "Ada\nStores" }), "accountName must be 1 to 100 characters of text"],
  ["a bankName of 101", CreateSettlementAccountRequestSchema, account({ bankName: "b".repeat(101) }), "bankName must be 1 to 100 characters of text"],
  ["an accountNumber of 9", CreateSettlementAccountRequestSchema, account({ accountNumber: "012345678" }), "accountNumber must be exactly 10 digits (NUBAN)"],
  ["a bankCode of letters", CreateSettlementAccountRequestSchema, account({ bankCode: "abc" }), "bankCode must be 3 to 6 digits"],
  ["an event type", ListEventsRequestSchema, { type: "payment_intent.refunded" }, "type must be one of payment_intent.created, payment_intent.processing, payment_intent.requires_action, payment_intent.succeeded, payment_intent.payment_failed, payment_intent.failed, payment_intent.expired, payment_intent.cancelled, refund.created, refund.succeeded, refund.failed, api_key.created, api_key.rolled, api_key.revoked"],
  ["a paymentIntentId of 101", ListEventsRequestSchema, { paymentIntentId: "p".repeat(101) }, "paymentIntentId must be at most 100 characters"],
  ["a delivery status", ListWebhookDeliveriesRequestSchema, { id: "we_1", status: "sent" }, "status must be one of pending, succeeded, failed"],
  ["a stream type twice", StreamEventsRequestSchema, { types: ["payment_intent.created", "payment_intent.created"] }, 'types[1]: "payment_intent.created" is listed twice'],
  ["a description of 257", CreateWebhookEndpointRequestSchema, endpoint({ description: "d".repeat(257) }), "description must be at most 256 characters of text"],
  ["an event type of an endpoint", CreateWebhookEndpointRequestSchema, endpoint({ eventTypes: ["x"] }), /^eventTypes\[0\] must be one of payment_intent.created, /.source],
  ["a merchant name of 101", CreateMerchantRequestSchema, { name: "n".repeat(101) }, "name must be 1 to 100 characters of text"],
  ["an empty merchant name", CreateMerchantRequestSchema, { name: "" }, "name must be 1 to 100 characters of text"],
  ["no outcome", CreatePaymentAttemptRequestSchema, { id: "pi_1" }, "outcome must be one of succeeded, declined, processing"],
  ["0 seconds", AdvanceClockRequestSchema, { seconds: 0n }, "seconds must be a whole number from 1 to 315360000 (ten years)"],
  ["eleven years", AdvanceClockRequestSchema, { seconds: 346_896_000n }, "seconds must be a whole number from 1 to 315360000 (ten years)"],
  // The URL syntax of every URL field, one implementation (src/rules/http-url.ts).
  ["a URL without a scheme", CreateWebhookEndpointRequestSchema, endpoint({ url: "hooks.example.com/x" }), badUrl],
  ["ftp", CreateWebhookEndpointRequestSchema, endpoint({ url: "ftp://hooks.example.com/x" }), badUrl],
  ["javascript:", CreateWebhookEndpointRequestSchema, endpoint({ url: "javascript:alert(1)" }), badUrl],
  ["no host", CreateWebhookEndpointRequestSchema, endpoint({ url: "https://" }), badUrl],
  ["a space", CreateWebhookEndpointRequestSchema, endpoint({ url: "https://hooks.example.com/a b" }), badUrl],
  ["a tab in the host", CreateWebhookEndpointRequestSchema, endpoint({ url: "https://hooks.exa\tmple.com/" }), badUrl],
  ["2049 characters", CreateWebhookEndpointRequestSchema, endpoint({ url: `https://hooks.example.com/${"a".repeat(2049 - 26)}` }), badUrl],
  ["2048 characters, longer once normalised", CreateWebhookEndpointRequestSchema, endpoint({ url: `https://hooks.example.com/${"é".repeat(2048 - 26)}` }), badUrl],
  ["a user and password", CreateWebhookEndpointRequestSchema, endpoint({ url: "https://user:pass@hooks.example.com/x" }), "url must not carry credentials"],
  ["an underscore in the host", CreateWebhookEndpointRequestSchema, endpoint({ url: "https://hooks_example.com/x" }), "url must name its host as a DNS name or an IP address"],
  ["a host starting with -", CreateWebhookEndpointRequestSchema, endpoint({ url: "https://-bad.example/x" }), "url must name its host as a DNS name or an IP address"],
  // Every string, whatever its field: storable as sent.
  ["NUL in a nested field", CreatePaymentIntentRequestSchema, intent({ settlementAccounts: [split("sa_\u0000", 1n)] }), "settlementAccounts[0].settlementAccountId must not contain NUL characters or unpaired surrogates"],
  ["a lone surrogate in a list", CreatePaymentIntentRequestSchema, intent({ paymentMethod: ["card", "\ud800"] }), "paymentMethod[1] must not contain NUL characters or unpaired surrogates"],
  ["NUL before the field's own rule", CreatePaymentIntentRequestSchema, intent({ currency: "NG\u0000" }), "currency must not contain NUL characters or unpaired surrogates"],
  ["NUL in a field without rules", ListPaymentIntentsRequestSchema, { pageToken: "a\u0000" }, "pageToken must not contain NUL characters or unpaired surrogates"],
  ["NUL in a oneof member", ServerReflectionRequestSchema, { messageRequest: { case: "fileByFilename", value: "a\u0000" } }, "fileByFilename must not contain NUL characters or unpaired surrogates"],
];

describe("the request checker (the proto's field rules)", () => {
  for (const [name, schema, init, message] of refusals) {
    it(`refuses ${name} over ${schema.name}: ${message}`, () => {
      const result = check(schema, init);
      assert.ok("refused" in result, `passed: ${JSON.stringify(result, (_, v) => (typeof v === "bigint" ? String(v) : v))}`);
      if (message.startsWith("^")) assert.match(result.refused, new RegExp(message));
      else assert.equal(result.refused, message);
    });
  }

  it("fills in the declared defaults (pageSize 50, currency NGN) and nothing else", () => {
    assert.deepEqual(check(ListPaymentIntentsRequestSchema, {}), { passed: create(ListPaymentIntentsRequestSchema, { pageSize: 50 }) });
    assert.deepEqual(check(ListEventsRequestSchema, { pageSize: 7 }), { passed: create(ListEventsRequestSchema, { pageSize: 7 }) });
    assert.deepEqual(check(CreatePaymentIntentRequestSchema, intent()), { passed: create(CreatePaymentIntentRequestSchema, intent({ currency: "NGN" })) });
  });

  it("takes what every rule allows, at each bound", () => {
    for (const [schema, init] of [
      [CreatePaymentIntentRequestSchema, intent({ amount: 1n })],
      [CreatePaymentIntentRequestSchema, intent({ amount: 1_000_000_000_000n, clientReference: "r".repeat(100), paymentMethod: ["card", "ussd"] })],
      [CreatePaymentIntentRequestSchema, intent({ callbackUrl: "HTTPS://Shop.Example.COM:443/paid", receiptEmail: "", currency: "NGN" })],
      [CreateSettlementAccountRequestSchema, account({ accountName: "À".repeat(100), bankCode: "123456" })],
      [CreateWebhookEndpointRequestSchema, endpoint({ description: "", eventTypes: [] })],
      [CreateWebhookEndpointRequestSchema, endpoint({ description: "📦".repeat(256), url: `https://hooks.example.com/${"a".repeat(2048 - 26)}` })],
      [ListEventsRequestSchema, { type: "", paymentIntentId: "p".repeat(100), pageSize: 100 }],
      [AdvanceClockRequestSchema, { seconds: 315_360_000n }],
      [CreateMerchantRequestSchema, {}],
    ] as const) {
      const result = check(schema, init);
      assert.ok("passed" in result, `${schema.name}: ${"refused" in result ? result.refused : ""}`);
    }
  });
});
