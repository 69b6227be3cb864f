import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import {
  createRestClient,
  expectJson,
  listItemOf,
  uniqueReference,
  type PaymentIntentJson,
  type PaymentIntentListItemJson,
  type PaymentIntentListJson,
  type RestClient,
  type SettlementAccountJson,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

describe("REST list payment intents: settlementAccount of each item", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  let noSplitsBeforeAccounts: PaymentIntentJson;
  let earliest: SettlementAccountJson;
  let newest: SettlementAccountJson;

  const createIntent = async (settlementAccounts?: { settlementAccountId: string; splitAmount: number }[]) => {
    clock.advance(1000);
    return expectJson<PaymentIntentJson>(
      await client.createIntent({
        amount: 10000,
        customerEmail: "ada@example.com",
        clientReference: uniqueReference("acct"),
        ...(settlementAccounts ? { settlementAccounts } : {}),
      }),
      201,
    );
  };
  const registerAccount = async (accountNumber: string, merchant = "merchantA") => {
    clock.advance(1000);
    return expectJson<SettlementAccountJson>(
      await client.createAccount({ accountName: `Account ${accountNumber}`, accountNumber, bankName: "Access Bank", bankCode: "044" }, merchant),
      201,
    );
  };
  const listed = async (id: string) => {
    const list = expectJson<PaymentIntentListJson>(await client.listIntents({ pageSize: "100" }), 200);
    const item = list.paymentIntents.find((i) => i.id === id);
    assert.ok(item, `intent ${id} is listed`);
    return item;
  };

  before(async () => {
    clock = createManualClock("2025-07-01T00:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
    noSplitsBeforeAccounts = await createIntent();
  });
  after(() => server.close());

  it("is null while the merchant has no settlement account", async () => {
    assert.deepEqual(await listed(noSplitsBeforeAccounts.id), listItemOf(noSplitsBeforeAccounts, null));
  });

  it("is the merchant's earliest registered account for an intent without splits", async () => {
    // merchantB registers first: its account must never show for merchantA.
    await registerAccount("9999999999", "merchantB");
    earliest = await registerAccount("1111111111");
    newest = await registerAccount("2222222222");
    const intent = await createIntent();
    assert.deepEqual(await listed(intent.id), listItemOf(intent, earliest));
    assert.deepEqual(await listed(noSplitsBeforeAccounts.id), listItemOf(noSplitsBeforeAccounts, earliest));
  });

  it("is the account of the first split when there are splits", async () => {
    const intent = await createIntent([
      { settlementAccountId: newest.id, splitAmount: 7000 },
      { settlementAccountId: earliest.id, splitAmount: 3000 },
    ]);
    const item = await listed(intent.id);
    assert.deepEqual(item, listItemOf(intent, newest));
    assert.equal("settlementAccounts" in item, false);
  });

  it("is the same in GET /v2/payment-intents/{id}", async () => {
    const withSplit = await createIntent([{ settlementAccountId: newest.id, splitAmount: 1 }]);
    const withoutSplit = await createIntent();
    assert.deepEqual(
      expectJson<PaymentIntentListItemJson>(await client.getIntent(withSplit.id), 200),
      listItemOf(withSplit, newest),
    );
    assert.deepEqual(
      expectJson<PaymentIntentListItemJson>(await client.getIntent(withoutSplit.id), 200),
      listItemOf(withoutSplit, earliest),
    );
  });

  it("comes from the calling merchant's own accounts only", async () => {
    // merchantB has exactly one account, registered before merchantA's.
    const ofB = expectJson<PaymentIntentJson>(
      await client.createIntent({ amount: 100, customerEmail: "b@example.com", clientReference: uniqueReference("b") }, "merchantB"),
      201,
    );
    const list = expectJson<PaymentIntentListJson>(await client.listIntents({}, "merchantB"), 200);
    const [accountOfB] = expectJson<{ settlementAccounts: SettlementAccountJson[] }>(
      await client.listAccounts("merchantB"),
      200,
    ).settlementAccounts;
    assert.equal(accountOfB?.accountNumber, "9999999999");
    assert.deepEqual(list.paymentIntents, [listItemOf(ofB, accountOfB!)]);
  });
});
