import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import {
  createRestClient,
  expectError,
  expectJson,
  uniqueReference,
  type PaymentIntentJson,
  type PaymentIntentListItemJson,
  type PaymentIntentListJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

function bodyFor(clientReference: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 50000,
    customerEmail: "ada@example.com",
    clientReference,
    paymentMethod: ["card"],
    callbackUrl: "https://shop.example/return",
    ...overrides,
  };
}

describe("REST create payment intent: idempotent retries", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock();
    server = await startTestServer({ clock });
    client = createRestClient(server);
  });
  after(() => server.close());

  it("replays an identical request: 200, the same intent, Idempotent-Replayed: true", async () => {
    const body = bodyFor(uniqueReference("idem"));
    const first = await client.createIntent(body);
    const created = expectJson<PaymentIntentJson>(first, 201);
    assert.equal(first.headers.get("idempotent-replayed"), null);

    // A retry a minute later still answers the stored intent, timestamps included.
    clock.advance(60_000);
    const second = await client.createIntent(body);
    const replayed = expectJson<PaymentIntentJson>(second, 200);
    assert.equal(second.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(replayed, created);
  });

  it("replays a retry that only spells out the defaults or writes a method as an object", async () => {
    const reference = uniqueReference("idem-defaults");
    const created = expectJson<PaymentIntentJson>(await client.createIntent(bodyFor(reference)), 201);
    const retry = await client.createIntent(
      bodyFor(reference, { currency: "NGN", receiptEmail: "ada@example.com", paymentMethod: [{ type: "card" }] }),
    );
    assert.deepEqual(expectJson<PaymentIntentJson>(retry, 200), created);
    assert.equal(retry.headers.get("idempotent-replayed"), "true");
  });

  const changes: { name: string; overrides: Record<string, unknown> }[] = [
    { name: "another amount", overrides: { amount: 50001 } },
    { name: "another customerEmail", overrides: { customerEmail: "grace@example.com" } },
    { name: "another receiptEmail", overrides: { receiptEmail: "receipts@shop.example" } },
    { name: "other payment methods", overrides: { paymentMethod: ["card", "ussd"] } },
    { name: "payment methods omitted", overrides: { paymentMethod: undefined } },
    { name: "another callbackUrl", overrides: { callbackUrl: "https://shop.example/other" } },
    { name: "callbackUrl omitted", overrides: { callbackUrl: undefined } },
  ];
  for (const { name, overrides } of changes) {
    it(`answers 409 for the same reference with ${name}, and keeps the stored intent`, async () => {
      const reference = uniqueReference("idem-conflict");
      const created = expectJson<PaymentIntentJson>(await client.createIntent(bodyFor(reference)), 201);
      const res = await client.createIntent(bodyFor(reference, overrides));
      expectError(res, 409, new RegExp(`clientReference ${reference}\\b`));
      assert.equal(res.headers.get("idempotent-replayed"), null);
      const stored = expectJson<PaymentIntentListItemJson>(await client.getIntent(created.id), 200);
      assert.equal(stored.amount, created.amount);
      assert.equal(stored.customerEmail, created.customerEmail);
      assert.deepEqual(stored.paymentMethods, created.paymentMethods);
      assert.equal(stored.callbackUrl, created.callbackUrl);
    });
  }

  it("answers 409 for the reference of a deleted intent, even with the identical body", async () => {
    const body = bodyFor(uniqueReference("idem-deleted"));
    const created = expectJson<PaymentIntentJson>(await client.createIntent(body), 201);
    expectJson(await client.deleteIntent(created.id), 200);
    expectError(await client.createIntent(body), 409, /clientReference .*deleted/);
    expectError(await client.createIntent({ ...body, amount: 1 }), 409, /clientReference .*deleted/);
  });

  it("scopes references per merchant: another merchant may use the same one", async () => {
    const body = bodyFor(uniqueReference("idem-tenant"));
    const ofA = expectJson<PaymentIntentJson>(await client.createIntent(body, "merchantA"), 201);
    const res = await client.createIntent(body, "merchantB");
    const ofB = expectJson<PaymentIntentJson>(res, 201);
    assert.equal(res.headers.get("idempotent-replayed"), null);
    assert.notEqual(ofB.id, ofA.id);
    assert.notEqual(ofB.checkoutLink, ofA.checkoutLink);
  });
});

describe("REST create payment intent: concurrent retries", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  it("creates exactly one intent from 20 identical concurrent requests: one 201, nineteen 200", async () => {
    const reference = uniqueReference("concurrent");
    const body = bodyFor(reference);
    const responses = await Promise.all(Array.from({ length: 20 }, () => client.createIntent(body)));

    assert.deepEqual(
      responses.map((res) => res.status).sort(),
      [...Array<number>(19).fill(200), 201],
    );
    const created = responses.filter((res) => res.status === 201);
    const replayed = responses.filter((res) => res.status === 200);
    assert.equal(created.length, 1);
    assert.equal(replayed.length, 19);
    for (const res of replayed) assert.equal(res.headers.get("idempotent-replayed"), "true");

    const bodies = responses.map((res) => expectJson<PaymentIntentJson>(res, res.status));
    const [first] = bodies;
    for (const intent of bodies) assert.deepEqual(intent, first);

    const list = expectJson<PaymentIntentListJson>(await client.listIntents(), 200);
    assert.deepEqual(
      list.paymentIntents.map((item) => [item.id, item.clientReference]),
      [[first!.id, reference]],
    );
  });

  it("lets exactly one of 10 concurrent different requests with one reference win; the rest get 409", async () => {
    const reference = uniqueReference("concurrent-conflict");
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.createIntent(bodyFor(reference, { amount: 1000 + i }))),
    );
    assert.deepEqual(
      responses.map((res) => res.status).sort(),
      [201, 409, 409, 409, 409, 409, 409, 409, 409, 409],
    );
    for (const res of responses.filter((r) => r.status === 409)) expectError(res, 409, /clientReference/);
    const list = expectJson<PaymentIntentListJson>(await client.listIntents({ clientReference: reference }), 200);
    assert.equal(list.paymentIntents.length, 1);
  });
});
