import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  allPaymentMethodViews,
  createRestClient,
  expectError,
  expectJson,
  paymentMethodViews,
  uniqueReference,
  type PaymentIntentJson,
  type PaymentMethodJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

function bodyWith(paymentMethod: unknown): Record<string, unknown> {
  return { amount: 50000, customerEmail: "ada@example.com", clientReference: uniqueReference("pm"), paymentMethod };
}

describe("REST create payment intent: paymentMethod", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    // The test server enables the third-party processor "paystack".
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  const accepted: { name: string; paymentMethod: unknown; want: PaymentMethodJson[] }[] = [
    { name: "card", paymentMethod: ["card"], want: [paymentMethodViews.card] },
    { name: "bank_transfer", paymentMethod: ["bank_transfer"], want: [paymentMethodViews.bank_transfer] },
    { name: "ussd", paymentMethod: ["ussd"], want: [paymentMethodViews.ussd] },
    { name: "the configured processor paystack", paymentMethod: ["paystack"], want: [paymentMethodViews.paystack] },
    { name: '{"type": "card"} as "card"', paymentMethod: [{ type: "card" }], want: [paymentMethodViews.card] },
    {
      name: "names and objects mixed, in the order given",
      paymentMethod: ["ussd", { type: "paystack" }, "card"],
      want: [paymentMethodViews.ussd, paymentMethodViews.paystack, paymentMethodViews.card],
    },
    { name: "null as omitted: every enabled method", paymentMethod: null, want: allPaymentMethodViews },
  ];
  for (const { name, paymentMethod, want } of accepted) {
    it(`accepts ${name}`, async () => {
      const intent = expectJson<PaymentIntentJson>(await client.createIntent(bodyWith(paymentMethod)), 201);
      assert.deepEqual(intent.paymentMethods, want);
    });
  }

  it("allows every enabled method, built-ins first, when paymentMethod is omitted", async () => {
    const body = bodyWith(undefined);
    delete body["paymentMethod"];
    const intent = expectJson<PaymentIntentJson>(await client.createIntent(body), 201);
    assert.deepEqual(intent.paymentMethods, allPaymentMethodViews);
  });

  it("answers the same paymentMethods for \"card\" and {\"type\": \"card\"}", async () => {
    const byName = expectJson<PaymentIntentJson>(await client.createIntent(bodyWith(["card"])), 201);
    const byObject = expectJson<PaymentIntentJson>(await client.createIntent(bodyWith([{ type: "card" }])), 201);
    assert.deepEqual(byObject.paymentMethods, byName.paymentMethods);
  });

  const refused: { name: string; paymentMethod: unknown; message: RegExp }[] = [
    { name: "an unknown name", paymentMethod: ["card", "bitcoin"], message: /^paymentMethod\[1\].*unknown payment method "bitcoin"/ },
    { name: "a name in the wrong case", paymentMethod: ["Card"], message: /^paymentMethod\[0\].*unknown payment method/ },
    { name: "an unconfigured processor", paymentMethod: ["flutterwave"], message: /^paymentMethod\[0\].*unknown payment method/ },
    {
      name: "11 items",
      paymentMethod: ["card", "bank_transfer", "ussd", "paystack", "card", "card", "card", "card", "card", "card", "card"],
      message: /^paymentMethod\b.*at most 10/,
    },
    { name: "a duplicate name", paymentMethod: ["card", "ussd", "card"], message: /^paymentMethod\[2\].*twice/ },
    { name: "a duplicate as an object", paymentMethod: ["card", { type: "card" }], message: /^paymentMethod\[1\].*twice/ },
    { name: "an empty list", paymentMethod: [], message: /^paymentMethod\b/ },
    { name: "a string instead of a list", paymentMethod: "card", message: /^paymentMethod must be an array/ },
    { name: "a number item", paymentMethod: [1], message: /^paymentMethod\[0\]/ },
    { name: "a null item", paymentMethod: [null], message: /^paymentMethod\[0\]/ },
    { name: "an object without type", paymentMethod: [{}], message: /^paymentMethod\[0\]\.type\b/ },
    { name: "an object with a non-string type", paymentMethod: [{ type: 1 }], message: /^paymentMethod\[0\]\.type\b/ },
    { name: "an object with an unknown key", paymentMethod: [{ name: "card" }], message: /unknown field paymentMethod\[0\]\.name\b/ },
  ];
  for (const { name, paymentMethod, message } of refused) {
    it(`answers 400 for ${name}`, async () => {
      expectError(await client.createIntent(bodyWith(paymentMethod)), 400, message);
    });
  }
});
