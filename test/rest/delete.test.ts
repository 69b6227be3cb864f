import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
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

describe("REST delete payment intent", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2025-08-01T10:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
  });
  after(() => server.close());

  const create = async () =>
    expectJson<PaymentIntentJson>(
      await client.createIntent({ amount: 100, customerEmail: "ada@example.com", clientReference: uniqueReference("del") }),
      201,
    );

  it("answers 200 {status, title, message} and removes the intent from the API", async () => {
    const intent = await create();
    const res = await client.deleteIntent(intent.id);
    assert.deepEqual(expectJson(res, 200), { status: 200, title: "OK", message: `Payment intent ${intent.id} deleted` });
    expectError(await client.getIntent(intent.id), 404, new RegExp(intent.id));
    const list = expectJson<PaymentIntentListJson>(await client.listIntents(), 200);
    assert.ok(!list.paymentIntents.some((item) => item.id === intent.id));
  });

  it("keeps the intent in storage, cancelled, with deletedAt set", async () => {
    clock.set("2025-08-01T10:00:00.000Z");
    const intent = await create();
    clock.set("2025-08-01T11:30:00.250Z");
    expectJson(await client.deleteIntent(intent.id), 200);
    const stored = await server.intents.findById("merchantA", intent.id);
    assert.ok(stored, "the intent is still stored");
    assert.equal(stored.status, "cancelled");
    assert.deepEqual(stored.deletedAt, new Date("2025-08-01T11:30:00.250Z"));
    assert.deepEqual(stored.updatedAt, new Date("2025-08-01T11:30:00.250Z"));
    assert.deepEqual(stored.createdAt, new Date("2025-08-01T10:00:00.000Z"));
    assert.equal(stored.clientReference, intent.clientReference);
    assert.equal(stored.amount, 100n);
  });

  it("answers 404 when the intent is deleted again", async () => {
    const intent = await create();
    expectJson(await client.deleteIntent(intent.id), 200);
    expectError(await client.deleteIntent(intent.id), 404, new RegExp(`payment intent ${intent.id} not found`));
  });

  const unknownIds = [
    "pi_00000000-0000-7000-8000-000000000000",
    "does-not-exist",
    "pi_with space",
    "pi_a/b",
    "%",
  ];
  for (const id of unknownIds) {
    it(`answers 404 for the unknown id ${JSON.stringify(id)}`, async () => {
      expectError(await client.deleteIntent(id), 404, /not found/);
    });
  }

  it("answers 404 for another merchant's intent and leaves it alone", async () => {
    const intent = await create();
    expectError(await client.deleteIntent(intent.id, "merchantB"), 404, new RegExp(`payment intent ${intent.id} not found`));
    const stored = await server.intents.findById("merchantA", intent.id);
    assert.equal(stored?.status, "pending");
    assert.equal(stored?.deletedAt, null);
    expectJson(await client.getIntent(intent.id), 200);
  });

  it("answers 409 for an intent that is no longer pending, and leaves it alone", async () => {
    const intent = await create();
    const stored = (await server.intents.findById("merchantA", intent.id))!;
    // Put a paid intent beside it, as the payment flow will.
    const paid = { ...stored, id: "pi_00000000-0000-7000-8000-0000000000aa", clientReference: uniqueReference("paid"), checkoutToken: `${stored.checkoutToken}-paid`, status: "successful" as const, transaction: "txn_test_paid" };
    assert.equal((await server.intents.insert(paid)).inserted, true);
    expectError(await client.deleteIntent(paid.id), 409, /successful/);
    assert.equal((await server.intents.findById("merchantA", paid.id))?.status, "successful");
  });

  it("refuses a DELETE with an unknown query parameter and keeps the intent", async () => {
    const intent = await create();
    expectError(
      await client.request("DELETE", `/v2/payment-intents/${intent.id}?force=true`),
      400,
      /unknown query parameter force\b/,
    );
    expectJson(await client.getIntent(intent.id), 200);
  });
});
