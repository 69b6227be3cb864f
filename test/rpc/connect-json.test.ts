import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { restCall } from "./support/rpc-helpers.js";

// A fixed clock with milliseconds, so both encodings render the same instant
// the same way ("…07.089Z") and whole bodies can be compared.
const now = new Date("2025-03-04T05:06:07.089Z");

type Json = Record<string, unknown>;

/**
 * withoutDefaults drops what proto3 JSON leaves out: null (an unset optional
 * or message field) and [] (an empty repeated field). The REST encoding keeps
 * them for a stable shape; everything else must be key-for-key the same.
 */
function withoutDefaults(body: Json): Json {
  return Object.fromEntries(
    Object.entries(body).filter(([, value]) => value !== null && !(Array.isArray(value) && value.length === 0)),
  );
}

describe("Connect JSON", () => {
  let server: TestServer;
  let accountId: string;

  /** connectCall POSTs a raw body to a Connect unary procedure; authorization null sends none. */
  async function connectCall(
    procedure: string,
    body: unknown,
    authorization: string | null = server.bearer(),
  ): Promise<{ status: number; headers: Headers; body: Json }> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (authorization !== null) headers["authorization"] = authorization;
    const res = await fetch(`${server.url}/payments.v2.${procedure}`, {
      method: "POST",
      headers,
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  }
  const createIntent = (body: unknown, authorization?: string | null) =>
    connectCall("PaymentIntentService/CreatePaymentIntent", body, authorization);
  const restCreate = (body: unknown) =>
    restCall(`${server.restUrl}/v2/payment-intents`, { method: "POST", authorization: server.bearer(), body });

  before(async () => {
    server = await startTestServer({ clock: { now: () => new Date(now) } });
    const account = await restCall(`${server.restUrl}/v2/settlement-accounts`, {
      method: "POST",
      authorization: server.bearer(),
      body: { accountName: "Ada Stores", accountNumber: "0123456789", bankName: "Test Bank", bankCode: "058" },
    });
    assert.equal(account.status, 201);
    accountId = String(account.body["id"]);
  });
  after(() => server.close());

  it("creates from the REST body and answers with the REST keys", async () => {
    const body = {
      amount: 50000,
      customerEmail: "ada@example.com",
      receiptEmail: "books@example.com",
      clientReference: "connect-json-1",
      paymentMethod: ["card", "ussd"],
      callbackUrl: "https://shop.example.com/done",
      settlementAccounts: [{ settlementAccountId: accountId, splitAmount: 20000 }],
    };
    const connect = await createIntent(body);
    assert.equal(connect.status, 200);
    assert.match(connect.headers.get("content-type") ?? "", /^application\/json\b/);
    assert.equal(connect.headers.get("idempotent-replayed"), null);
    assert.equal(connect.body["amount"], "50000", "int64 is a JSON string, as §2.1 shows");
    assert.equal(connect.body["status"], "pending");

    // The identical REST request is a replay of the same intent: both
    // decodings produced the same request, and both render the same resource.
    const rest = await restCreate(body);
    assert.equal(rest.status, 200);
    assert.equal(rest.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(connect.body, withoutDefaults(rest.body));
    assert.deepEqual(
      Object.keys(rest.body).filter((key) => !(key in connect.body)),
      ["transaction", "meta", "nextAction"],
      "only fields at their proto3 default are left out",
    );
  });

  it("replays over Connect with the idempotent-replayed header", async () => {
    const body = { amount: 700, customerEmail: "ada@example.com", clientReference: "connect-json-replay" };
    const first = await createIntent(body);
    const again = await createIntent(body);
    assert.equal(first.status, 200);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(again.body, first.body);
  });

  const amounts: { name: string; amount: number | string }[] = [
    { name: "a JSON number", amount: 125000 },
    { name: "a JSON string (proto3 JSON int64)", amount: "125000" },
  ];
  for (const { name, amount } of amounts) {
    it(`takes amount as ${name}`, async () => {
      const res = await createIntent({
        amount,
        customerEmail: "ada@example.com",
        clientReference: `connect-json-amount-${typeof amount}`,
      });
      assert.equal(res.status, 200);
      assert.equal(res.body["amount"], "125000");
      assert.equal(res.body["totalAmount"], "125000");
    });
  }

  it("lists with the REST keys, settlementAccount included", async () => {
    const connect = await connectCall("PaymentIntentService/ListPaymentIntents", { pageSize: 100 });
    const rest = await restCall(`${server.restUrl}/v2/payment-intents?pageSize=100`, {
      method: "GET",
      authorization: server.bearer(),
    });
    assert.equal(connect.status, 200);
    assert.equal(rest.status, 200);
    assert.deepEqual(Object.keys(connect.body), ["paymentIntents"]);
    const items = connect.body["paymentIntents"] as Json[];
    const restItems = rest.body["paymentIntents"] as Json[];
    assert.ok(items.length >= 4);
    assert.deepEqual(items, restItems.map(withoutDefaults));
    for (const item of items) {
      assert.ok(!("settlementAccounts" in item), "a list item has no splits (§2.4 note)");
      assert.equal((item["settlementAccount"] as Json)["id"], accountId);
    }
  });

  it("deletes with exactly the REST reply", async () => {
    const created = await createIntent({ amount: 900, customerEmail: "ada@example.com", clientReference: "connect-json-del" });
    const id = String(created.body["id"]);
    const res = await connectCall("PaymentIntentService/DeletePaymentIntent", { id });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 200, title: "OK", message: `Payment intent ${id} deleted` });
  });

  // Issue 22 §3: proto3 JSON skips unknown fields as binary does (a client built from a newer proto keeps working); REST refuses them.
  it("ignores an unknown field, top-level and nested, where REST refuses it with 400", async () => {
    const body = {
      amount: 500,
      customerEmail: "ada@example.com",
      clientReference: "connect-json-unknown",
      bogusField: 1,
      settlementAccounts: [{ settlementAccountId: accountId, splitAmount: 100, newerField: "x" }],
    };
    const rest = await restCreate({ ...body, clientReference: "connect-json-unknown-rest" });
    assert.deepEqual(rest.body, { status: 400, title: "Bad Request", message: "unknown field bogusField" });
    const res = await createIntent(body);
    assert.equal(res.status, 200);
    assert.equal(res.body["clientReference"], "connect-json-unknown");
    assert.equal(res.body["amount"], "500");
    assert.ok(!("bogusField" in res.body));
  });

  it("refuses an invalid amount with REST's message", async () => {
    const body = { amount: 0, customerEmail: "ada@example.com", clientReference: "connect-json-zero" };
    const res = await createIntent(body);
    const rest = await restCreate(body);
    assert.equal(res.status, 400);
    assert.equal(rest.status, 400);
    assert.deepEqual(res.body, { code: "invalid_argument", message: rest.body["message"] });
  });

  it("answers 401 unauthenticated without a key, with REST's message", async () => {
    const body = { amount: 500, customerEmail: "ada@example.com", clientReference: "connect-json-nokey" };
    const res = await createIntent(body, null);
    assert.equal(res.status, 401);
    const rest = await restCall(`${server.restUrl}/v2/payment-intents`, { method: "POST", body });
    assert.equal(rest.status, 401);
    assert.deepEqual(res.body, { code: "unauthenticated", message: rest.body["message"] });
    assert.equal(res.body["message"], "missing Authorization header: send 'Authorization: Bearer <api key>'");
  });

  it("answers 401 unauthenticated to an unknown key", async () => {
    const res = await createIntent(
      { amount: 500, customerEmail: "ada@example.com", clientReference: "connect-json-badkey" },
      "Bearer sk_test_unknown",
    );
    assert.equal(res.status, 401);
    assert.equal(res.body["code"], "unauthenticated");
  });
});
