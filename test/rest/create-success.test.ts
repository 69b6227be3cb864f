import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import {
  allPaymentMethodViews,
  assertOnlyKeys,
  createRestClient,
  expectJson,
  listItemOf,
  paymentIntentKeys,
  paymentIntentListItemKeys,
  paymentMethodViews,
  redactIntent,
  type PaymentIntentJson,
  type PaymentIntentListItemJson,
  type RestClient,
  type SettlementAccountJson,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

describe("REST create payment intent: success", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2025-03-04T05:06:07.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
  });
  after(() => server.close());

  it("answers 201 with Location and exactly the §2.1 intent for a minimal body", async () => {
    const res = await client.createIntent({ amount: 50000, customerEmail: "ada@example.com", clientReference: "order-1" });
    const intent = expectJson<PaymentIntentJson>(res, 201);
    assert.equal(res.headers.get("location"), `/v1/v2/payment-intents/${intent.id}`);
    assert.equal(res.headers.get("idempotent-replayed"), null);
    assertOnlyKeys(intent, paymentIntentKeys, "create response");
    assert.deepEqual(redactIntent(server, intent), {
      id: "<id>",
      amount: "50000",
      totalAmount: "50000",
      currency: "NGN",
      receiptEmail: "ada@example.com",
      customerEmail: "ada@example.com",
      country: "NG",
      status: "pending",
      checkoutLink: "<checkoutLink>",
      clientReference: "order-1",
      paymentMethods: allPaymentMethodViews,
      callbackUrl: null,
      transaction: null,
      meta: [],
      settlementAccounts: [],
      // RFC 3339 UTC with milliseconds, even when they are zero.
      createdAt: "2025-03-04T05:06:07.000Z",
      updatedAt: "2025-03-04T05:06:07.000Z",
      amountRefunded: "0",
      nextAction: null,
      livemode: false,
    });
  });

  it("echoes every field of a full body", async () => {
    const account = expectJson<SettlementAccountJson>(
      await client.createAccount({ accountName: "Ada Shop", accountNumber: "0123456789", bankName: "GTBank", bankCode: "058" }),
      201,
    );
    clock.set("2025-03-04T05:06:08.123Z");
    const res = await client.createIntent({
      amount: 250000,
      customerEmail: "payer@example.com",
      receiptEmail: "receipts@shop.example",
      currency: "NGN",
      clientReference: "order-2",
      // Not paystack: it cannot collect an intent with splits (docs/payments.md).
      paymentMethod: ["bank_transfer", { type: "ussd" }],
      callbackUrl: "https://shop.example/return?order=2",
      settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 200000 }],
    });
    const intent = expectJson<PaymentIntentJson>(res, 201);
    assert.equal(res.headers.get("location"), `/v1/v2/payment-intents/${intent.id}`);
    assertOnlyKeys(intent, paymentIntentKeys, "create response");
    assert.deepEqual(redactIntent(server, intent), {
      id: "<id>",
      amount: "250000",
      totalAmount: "250000",
      currency: "NGN",
      receiptEmail: "receipts@shop.example",
      customerEmail: "payer@example.com",
      country: "NG",
      status: "pending",
      checkoutLink: "<checkoutLink>",
      clientReference: "order-2",
      paymentMethods: [paymentMethodViews.bank_transfer, paymentMethodViews.ussd],
      callbackUrl: "https://shop.example/return?order=2",
      transaction: null,
      meta: [],
      settlementAccounts: [{ settlementAccountId: account.id, splitAmount: "200000" }],
      createdAt: "2025-03-04T05:06:08.123Z",
      updatedAt: "2025-03-04T05:06:08.123Z",
      amountRefunded: "0",
      nextAction: null,
      livemode: false,
    });
  });

  it("serves the intent at its Location", async () => {
    // merchantB has no settlement account, so the item's settlementAccount is null.
    const created = await client.createIntent(
      { amount: 700, customerEmail: "ada@example.com", clientReference: "order-3" },
      "merchantB",
    );
    const intent = expectJson<PaymentIntentJson>(created, 201);
    const location = created.headers.get("location");
    assert.equal(location, `/v1/v2/payment-intents/${intent.id}`);
    const item = expectJson<PaymentIntentListItemJson>(
      await client.request("GET", `${server.url}${location}`, { merchant: "merchantB" }),
      200,
    );
    assertOnlyKeys(item, paymentIntentListItemKeys, "GET response");
    assert.deepEqual(item, listItemOf(intent, null));
  });

  it("gives every intent its own unguessable checkout link, not derived from the id", async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const intent = expectJson<PaymentIntentJson>(
        await client.createIntent({ amount: 100, customerEmail: "ada@example.com", clientReference: `link-${i}` }),
        201,
      );
      const token = intent.checkoutLink.slice(`${server.url}/checkout/`.length);
      // At least 128 bits: 22 base64url characters.
      assert.ok(token.length >= 22, token);
      assert.ok(!token.includes(intent.id.slice(3)) && !intent.id.includes(token), "token is independent of the id");
      tokens.add(token);
    }
    assert.equal(tokens.size, 5);
  });

  it("gives intents distinct, increasing ids even within one millisecond", async () => {
    clock.set("2025-03-04T05:06:09.000Z");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        expectJson<PaymentIntentJson>(
          await client.createIntent({ amount: 100, customerEmail: "ada@example.com", clientReference: `same-ms-${i}` }),
          201,
        ).id,
      );
    }
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, 5);
  });
});
