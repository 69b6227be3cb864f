import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createRestClient,
  expectError,
  expectJson,
  listItemOf,
  type PaymentIntentJson,
  type PaymentIntentListItemJson,
  type PaymentIntentListJson,
  type RestClient,
  type SettlementAccountJson,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

describe("REST tenant scoping", () => {
  let server: TestServer;
  let client: RestClient;
  let intentOfA: PaymentIntentJson;
  const intentsOfB: PaymentIntentJson[] = [];

  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
    intentOfA = expectJson<PaymentIntentJson>(
      await client.createIntent({ amount: 100, customerEmail: "a@example.com", clientReference: "shared-ref" }, "merchantA"),
      201,
    );
    for (const reference of ["b-1", "b-2", "b-3"]) {
      intentsOfB.push(
        expectJson<PaymentIntentJson>(
          await client.createIntent({ amount: 200, customerEmail: "b@example.com", clientReference: reference }, "merchantB"),
          201,
        ),
      );
    }
  });
  after(() => server.close());

  it("never lists another merchant's intents", async () => {
    const ofB = expectJson<PaymentIntentListJson>(await client.listIntents({}, "merchantB"), 200);
    assert.deepEqual(
      ofB.paymentIntents.map((item) => item.id),
      [...intentsOfB].reverse().map((intent) => intent.id),
    );
    const ofA = expectJson<PaymentIntentListJson>(await client.listIntents({}, "merchantA"), 200);
    assert.deepEqual(ofA, { paymentIntents: [listItemOf(intentOfA, null)] });
  });

  it("does not find another merchant's intent by its clientReference", async () => {
    const list = expectJson<PaymentIntentListJson>(await client.listIntents({ clientReference: "shared-ref" }, "merchantB"), 200);
    assert.deepEqual(list, { paymentIntents: [] });
  });

  it("answers 404 to GET of another merchant's intent, as for an id that does not exist", async () => {
    const foreign = expectError(await client.getIntent(intentOfA.id, "merchantB"), 404, new RegExp(intentOfA.id));
    const unknownId = "pi_00000000-0000-7000-8000-000000000000";
    const unknown = expectError(await client.getIntent(unknownId, "merchantB"), 404, new RegExp(unknownId));
    assert.equal(foreign.replace(intentOfA.id, "<id>"), unknown.replace(unknownId, "<id>"));
    assert.deepEqual(
      expectJson<PaymentIntentListItemJson>(await client.getIntent(intentOfA.id, "merchantA"), 200),
      listItemOf(intentOfA, null),
    );
  });

  it("answers 404 to DELETE of another merchant's intent and leaves it live", async () => {
    expectError(await client.deleteIntent(intentOfA.id, "merchantB"), 404, new RegExp(intentOfA.id));
    const ofA = expectJson<PaymentIntentListJson>(await client.listIntents({}, "merchantA"), 200);
    assert.deepEqual(ofA.paymentIntents.map((item) => item.id), [intentOfA.id]);
    assert.equal((await server.intents.findById("merchantA", intentOfA.id))?.status, "pending");
  });

  it("refuses another merchant's page token with 400", async () => {
    const pageOfB = expectJson<PaymentIntentListJson>(await client.listIntents({ pageSize: "1" }, "merchantB"), 200);
    assert.ok(pageOfB.nextPageToken);
    expectError(
      await client.listIntents({ pageSize: "1", pageToken: pageOfB.nextPageToken }, "merchantA"),
      400,
      /^pageToken\b/,
    );
    // The same token still works for its owner.
    const next = expectJson<PaymentIntentListJson>(
      await client.listIntents({ pageSize: "1", pageToken: pageOfB.nextPageToken }, "merchantB"),
      200,
    );
    assert.deepEqual(next.paymentIntents.map((item) => item.id), [intentsOfB[1]!.id]);
  });

  it("keeps settlement accounts per merchant", async () => {
    const accountOfA = expectJson<SettlementAccountJson>(
      await client.createAccount({ accountName: "A", accountNumber: "1234567890", bankName: "Bank", bankCode: "058" }, "merchantA"),
      201,
    );
    assert.deepEqual(expectJson(await client.listAccounts("merchantB"), 200), { settlementAccounts: [] });
    assert.deepEqual(expectJson(await client.listAccounts("merchantA"), 200), { settlementAccounts: [accountOfA] });
    expectError(
      await client.createIntent(
        {
          amount: 100,
          customerEmail: "b@example.com",
          clientReference: "b-split",
          settlementAccounts: [{ settlementAccountId: accountOfA.id, splitAmount: 100 }],
        },
        "merchantB",
      ),
      400,
      /^settlementAccounts\[0\]\.settlementAccountId\b/,
    );
  });
});
