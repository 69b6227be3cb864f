import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "./support/test-server.js";
import { checkoutTokenSource } from "../src/lib/checkout-token.js";

describe("server", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it("creates a payment intent over REST", async () => {
    const res = await fetch(`${server.restUrl}/v2/payment-intents`, {
      method: "POST",
      headers: { authorization: server.bearer(), "content-type": "application/json" },
      body: JSON.stringify({ amount: 50000, customerEmail: "ada@example.com", clientReference: "smoke-1" }),
    });
    assert.equal(res.status, 201);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body.amount, "50000");
    assert.match(String(body.checkoutLink), new RegExp(`^${server.url}/checkout/${checkoutTokenSource}$`));
  });
});
