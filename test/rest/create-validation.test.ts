import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createRestClient,
  expectError,
  expectJson,
  uniqueReference,
  type PaymentIntentJson,
  type PaymentIntentListJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** An email of exactly length characters: a 64-character local part and a dotted domain. */
function emailOfLength(length: number): string {
  const local = "a".repeat(64);
  let domain = "";
  while (local.length + 1 + domain.length + ".com".length < length) {
    const room = length - (local.length + 1 + domain.length + ".com".length);
    domain += `${domain === "" ? "" : "."}${"b".repeat(Math.min(63, domain === "" ? room : room - 1))}`;
  }
  const email = `${local}@${domain}.com`;
  assert.equal(email.length, length);
  return email;
}

function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { amount: 50000, customerEmail: "ada@example.com", clientReference: uniqueReference("val"), ...overrides };
}

function without(key: string): Record<string, unknown> {
  const body = validBody();
  delete body[key];
  return body;
}

interface InvalidCase {
  name: string;
  body: unknown;
  /** What the message must say: the field it is about. */
  message: RegExp;
}

const invalidCases: InvalidCase[] = [
  // amount: a JSON integer from 1 to 1e12 (kobo).
  { name: "amount missing", body: without("amount"), message: /^amount\b/ },
  { name: "amount null", body: validBody({ amount: null }), message: /^amount\b/ },
  { name: "amount 0", body: validBody({ amount: 0 }), message: /^amount\b/ },
  { name: "amount negative", body: validBody({ amount: -1 }), message: /^amount\b/ },
  { name: "amount 1e12 + 1", body: validBody({ amount: 1_000_000_000_001 }), message: /^amount\b/ },
  { name: "amount beyond 2^53", body: validBody({ amount: 2 ** 53 }), message: /^amount\b/ },
  { name: "amount boolean", body: validBody({ amount: true }), message: /^amount\b/ },
  { name: "amount string", body: validBody({ amount: "500" }), message: /^amount\b/ },
  { name: "amount fraction", body: validBody({ amount: 1.5 }), message: /^amount\b/ },
  { name: "amount object", body: validBody({ amount: { value: 1 } }), message: /^amount\b/ },
  // customerEmail: required, valid, at most 254 characters.
  { name: "customerEmail missing", body: without("customerEmail"), message: /^customerEmail\b/ },
  { name: "customerEmail empty", body: validBody({ customerEmail: "" }), message: /^customerEmail\b/ },
  { name: "customerEmail without @", body: validBody({ customerEmail: "ada.example.com" }), message: /^customerEmail\b/ },
  { name: "customerEmail without domain dot", body: validBody({ customerEmail: "ada@localhost" }), message: /^customerEmail\b/ },
  { name: "customerEmail with space", body: validBody({ customerEmail: "ada lovelace@example.com" }), message: /^customerEmail\b/ },
  { name: "customerEmail of 255 characters", body: validBody({ customerEmail: emailOfLength(255) }), message: /^customerEmail\b/ },
  { name: "customerEmail a number", body: validBody({ customerEmail: 42 }), message: /^customerEmail\b/ },
  // receiptEmail: optional, but valid when given.
  { name: "receiptEmail invalid", body: validBody({ receiptEmail: "not-an-email" }), message: /^receiptEmail\b/ },
  { name: "receiptEmail of 255 characters", body: validBody({ receiptEmail: emailOfLength(255) }), message: /^receiptEmail\b/ },
  // currency: NGN only.
  { name: "currency usd", body: validBody({ currency: "usd" }), message: /^currency\b.*only NGN is supported/ },
  { name: "currency USD", body: validBody({ currency: "USD" }), message: /^currency\b.*only NGN is supported/ },
  { name: "currency lower-case ngn", body: validBody({ currency: "ngn" }), message: /^currency\b.*only NGN is supported/ },
  { name: "currency a number", body: validBody({ currency: 566 }), message: /^currency\b/ },
  // clientReference: 1–100 of [A-Za-z0-9._:-].
  { name: "clientReference missing", body: without("clientReference"), message: /^clientReference\b/ },
  { name: "clientReference empty", body: validBody({ clientReference: "" }), message: /^clientReference\b/ },
  { name: "clientReference of 101 characters", body: validBody({ clientReference: "r".repeat(101) }), message: /^clientReference\b/ },
  { name: "clientReference with a space", body: validBody({ clientReference: "order 1" }), message: /^clientReference\b/ },
  { name: "clientReference with a slash", body: validBody({ clientReference: "order/1" }), message: /^clientReference\b/ },
  { name: "clientReference with non-ASCII", body: validBody({ clientReference: "ordér-1" }), message: /^clientReference\b/ },
  // callbackUrl: absolute http(s), at most 2048 characters.
  { name: "callbackUrl relative", body: validBody({ callbackUrl: "/return" }), message: /^callbackUrl\b/ },
  { name: "callbackUrl scheme-relative", body: validBody({ callbackUrl: "//shop.example/return" }), message: /^callbackUrl\b/ },
  { name: "callbackUrl javascript:", body: validBody({ callbackUrl: "javascript:alert(1)" }), message: /^callbackUrl\b/ },
  { name: "callbackUrl ftp:", body: validBody({ callbackUrl: "ftp://shop.example/return" }), message: /^callbackUrl\b/ },
  { name: "callbackUrl empty", body: validBody({ callbackUrl: "" }), message: /^callbackUrl\b/ },
  {
    name: "callbackUrl of 2049 characters",
    body: validBody({ callbackUrl: `https://shop.example/${"p".repeat(2049 - "https://shop.example/".length)}` }),
    message: /^callbackUrl\b/,
  },
  // Unknown fields, at the top level and nested.
  { name: "unknown top-level field", body: validBody({ description: "x" }), message: /unknown field description\b/ },
  { name: "proto field name instead of JSON name", body: validBody({ customer_email: "ada@example.com" }), message: /unknown field customer_email\b/ },
  {
    name: "unknown field in a split",
    body: validBody({ settlementAccounts: [{ settlementAccountId: "sa_x", splitAmount: 1, note: "x" }] }),
    message: /unknown field settlementAccounts\[0\]\.note\b/,
  },
  {
    name: "unknown field in a payment method object",
    body: validBody({ paymentMethod: [{ type: "card", brand: "visa" }] }),
    message: /unknown field paymentMethod\[0\]\.brand\b/,
  },
];

describe("REST create payment intent: validation", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  for (const { name, body, message } of invalidCases) {
    it(`answers 400 naming the field: ${name}`, async () => {
      expectError(await client.createIntent(body), 400, message);
    });
  }

  const bodyCases: { name: string; raw: string | Uint8Array; message: RegExp }[] = [
    { name: "malformed JSON", raw: '{"amount": 50000,', message: /not valid JSON/ },
    { name: "JSON with a trailing comma", raw: '{"amount": 50000,}', message: /not valid JSON/ },
    { name: "an array", raw: "[]", message: /must be a JSON object/ },
    { name: "a string", raw: '"amount"', message: /must be a JSON object/ },
    { name: "null", raw: "null", message: /must be a JSON object/ },
    { name: "a number", raw: "50000", message: /must be a JSON object/ },
    { name: "empty", raw: "", message: /must be a JSON object/ },
    {
      name: "an object with a __proto__ key",
      raw: '{"amount": 100, "customerEmail": "ada@example.com", "clientReference": "proto", "__proto__": {"x": 1}}',
      message: /unknown field __proto__/,
    },
    { name: "invalid UTF-8", raw: Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), message: /UTF-8/ },
  ];
  for (const { name, raw, message } of bodyCases) {
    it(`answers 400 for a body that is ${name}`, async () => {
      expectError(await client.request("POST", "/v2/payment-intents", { raw }), 400, message);
    });
  }

  it("stores nothing for any refused request", async () => {
    const list = expectJson<PaymentIntentListJson>(await client.listIntents(), 200);
    assert.deepEqual(list, { paymentIntents: [] });
  });
});

describe("REST create payment intent: values at the limits", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  const validCases: { name: string; body: Record<string, unknown>; check(intent: PaymentIntentJson): void }[] = [
    { name: "amount 1", body: validBody({ amount: 1 }), check: (i) => assert.equal(i.amount, "1") },
    {
      name: "amount 1e12 (the maximum)",
      body: validBody({ amount: 1_000_000_000_000 }),
      check: (i) => assert.deepEqual([i.amount, i.totalAmount], ["1000000000000", "1000000000000"]),
    },
    {
      name: "customerEmail of 254 characters",
      body: validBody({ customerEmail: emailOfLength(254) }),
      check: (i) => assert.deepEqual([i.customerEmail, i.receiptEmail], [emailOfLength(254), emailOfLength(254)]),
    },
    {
      name: "receiptEmail omitted: the customer gets the receipt",
      body: validBody({ customerEmail: "payer@example.com" }),
      check: (i) => assert.equal(i.receiptEmail, "payer@example.com"),
    },
    {
      name: "receiptEmail given",
      body: validBody({ customerEmail: "payer@example.com", receiptEmail: "accounts@shop.example" }),
      check: (i) => assert.deepEqual([i.customerEmail, i.receiptEmail], ["payer@example.com", "accounts@shop.example"]),
    },
    { name: "currency omitted defaults to NGN", body: validBody(), check: (i) => assert.equal(i.currency, "NGN") },
    { name: "currency NGN", body: validBody({ currency: "NGN" }), check: (i) => assert.equal(i.currency, "NGN") },
    {
      name: "clientReference of 100 characters of every allowed kind",
      body: validBody({ clientReference: `Az09._:-${"x".repeat(92)}` }),
      check: (i) => assert.equal(i.clientReference, `Az09._:-${"x".repeat(92)}`),
    },
    {
      name: "callbackUrl https with a query",
      body: validBody({ callbackUrl: "https://shop.example/return?order=42&lang=en" }),
      check: (i) => assert.equal(i.callbackUrl, "https://shop.example/return?order=42&lang=en"),
    },
    {
      name: "callbackUrl http with a port",
      body: validBody({ callbackUrl: "http://localhost:3000/done" }),
      check: (i) => assert.equal(i.callbackUrl, "http://localhost:3000/done"),
    },
    {
      name: "callbackUrl of exactly 2048 characters",
      body: validBody({ callbackUrl: `https://shop.example/${"p".repeat(2048 - "https://shop.example/".length)}` }),
      check: (i) => assert.equal(i.callbackUrl?.length, 2048),
    },
    {
      name: "callbackUrl null means none",
      body: validBody({ callbackUrl: null }),
      check: (i) => assert.equal(i.callbackUrl, null),
    },
  ];
  for (const { name, body, check } of validCases) {
    it(`accepts ${name}`, async () => {
      check(expectJson<PaymentIntentJson>(await client.createIntent(body), 201));
    });
  }
});
