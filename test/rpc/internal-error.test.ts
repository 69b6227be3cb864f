import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createClient } from "@connectrpc/connect";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import type { Logger } from "../../src/lib/logger.js";
import { createMemoryPaymentIntentStore } from "../../src/store/memory/memory-payment-intent-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";

const secret = "secret sql detail";

/** A store whose list fails the way a broken database would. */
function failingListStore(): PaymentIntentStore {
  const store = createMemoryPaymentIntentStore();
  return {
    ...store,
    list: async () => {
      throw new Error(`${secret}: relation "payment_intents" does not exist`);
    },
  };
}

describe("an unexpected error", () => {
  let server: TestServer;
  const logged: string[] = [];
  const logger: Logger = {
    info() {},
    warn() {},
    error: (fields, message) => logged.push(JSON.stringify({ message, ...fields })),
  };

  before(async () => {
    server = await startTestServer({ intents: failingListStore(), logger });
  });
  after(() => server.close());

  it("answers REST with 500 {status, title, message: internal error} and logs the cause", async () => {
    logged.length = 0;
    const res = await fetch(`${server.restUrl}/v2/payment-intents`, { headers: { authorization: server.bearer() } });
    const text = await res.text();
    assert.equal(res.status, 500);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.deepEqual(JSON.parse(text), { status: 500, title: "Internal Server Error", message: "internal error" });
    assert.ok(!text.includes("secret"), text);
    assert.ok(logged.some((line) => line.includes(secret)), "the original error is logged for the operator");
  });

  for (const protocol of rpcProtocols) {
    it(`answers ${protocol.name} with Internal "internal error" and logs the cause`, async () => {
      logged.length = 0;
      const client = createClient(PaymentIntentService, protocol.transport(server.url, []));
      const error = await expectConnectError(
        client.listPaymentIntents({}, { headers: { authorization: server.bearer() } }),
        Code.Internal,
        "internal error",
      );
      assert.ok(!error.message.includes("secret"), error.message);
      assert.ok(!JSON.stringify(error.details).includes("secret"));
      error.metadata.forEach((value, key) => assert.ok(!value.includes("secret"), `${key}: ${value}`));
      assert.ok(logged.some((line) => line.includes(secret)), "the original error is logged for the operator");
    });
  }

  it("answers a raw Connect JSON call without the secret", async () => {
    const res = await fetch(`${server.url}/payments.v2.PaymentIntentService/ListPaymentIntents`, {
      method: "POST",
      headers: { authorization: server.bearer(), "content-type": "application/json" },
      body: "{}",
    });
    const text = await res.text();
    assert.equal(res.status, 500);
    assert.deepEqual(JSON.parse(text), { code: "internal", message: "internal error" });
  });

  it("leaves the methods that do not touch the failing store working", async () => {
    const client = createClient(PaymentIntentService, rpcProtocols[0]!.transport(server.url, []));
    const intent = await client.createPaymentIntent(
      { amount: 100n, customerEmail: "ada@example.com", clientReference: "still-works" },
      { headers: { authorization: server.bearer() } },
    );
    assert.equal(intent.status, "pending");
  });
});
