import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createRestClient,
  expectJson,
  paymentMethodViews,
  uniqueReference,
  type PaymentIntentJson,
  type PaymentIntentListJson,
  type RestClient,
  type SettlementAccountJson,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const body = (fields: Record<string, unknown>) => ({ amount: 50000, customerEmail: "ada@example.com", clientReference: uniqueReference("ps"), ...fields });

/** Asserts the exact §7 error body and that merchantA still has no intent. */
async function assertRefused(client: RestClient, fields: Record<string, unknown>, message: string) {
  const res = await client.createIntent(body(fields));
  assert.deepEqual(expectJson(res, 400), { status: 400, title: "Bad Request", message });
  assert.deepEqual(expectJson<PaymentIntentListJson>(await client.listIntents(), 200).paymentIntents, []);
}

describe("REST create payment intent: paystack", () => {
  describe("without PAYSTACK_SECRET_KEY", () => {
    let server: TestServer;
    let client: RestClient;
    before(async () => {
      server = await startTestServer({ processors: [] });
      client = createRestClient(server);
    });
    after(() => server.close());

    it("refuses paystack with 400 saying the processor is not configured, and creates nothing", async () => {
      await assertRefused(client, { paymentMethod: ["card", "paystack"] }, 'paymentMethod[1]: the payment processor "paystack" is not configured on this service');
    });

    it("does not offer paystack by default", async () => {
      const intent = expectJson<PaymentIntentJson>(await client.createIntent(body({})), 201);
      assert.deepEqual(intent.paymentMethods.map((m) => m.type), ["card", "bank_transfer", "ussd"]);
    });
  });

  describe("with PAYSTACK_SECRET_KEY", () => {
    let server: TestServer;
    let client: RestClient;
    let account: SettlementAccountJson;
    before(async () => {
      // The test server offers paystack, as PAYSTACK_SECRET_KEY does.
      server = await startTestServer();
      client = createRestClient(server);
      account = expectJson<SettlementAccountJson>(
        await client.createAccount({ accountName: "Shop", accountNumber: "1000000001", bankName: "Test Bank", bankCode: "058" }),
        201,
      );
    });
    after(() => server.close());

    it("accepts paystack and shows it among the intent's methods", async () => {
      const intent = expectJson<PaymentIntentJson>(await client.createIntent(body({ paymentMethod: ["paystack"] })), 201);
      assert.deepEqual(intent.paymentMethods, [paymentMethodViews.paystack]);
      assert.equal(expectJson<PaymentIntentListJson>(await client.listIntents(), 200).paymentIntents.length, 1);
      expectJson(await client.deleteIntent(intent.id), 200);
    });

    it("refuses paystack with settlement splits, saying so, and creates nothing", async () => {
      await assertRefused(
        client,
        { paymentMethod: ["paystack"], settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 1000 }] },
        'paymentMethod[0]: "paystack" cannot collect an intent with settlementAccounts: its split accounts are not mapped yet',
      );
    });

    it("by default, an intent with splits is offered every method but paystack", async () => {
      const intent = expectJson<PaymentIntentJson>(
        await client.createIntent(body({ settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 1000 }] })),
        201,
      );
      assert.deepEqual(intent.paymentMethods.map((m) => m.type), ["card", "bank_transfer", "ussd"]);
    });
  });
});
