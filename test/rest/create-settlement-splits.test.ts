import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createRestClient,
  expectError,
  expectJson,
  uniqueReference,
  type PaymentIntentJson,
  type PaymentIntentListJson,
  type RestClient,
  type SettlementAccountJson,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

function bodyWith(settlementAccounts: unknown, amount = 10000): Record<string, unknown> {
  return { amount, customerEmail: "ada@example.com", clientReference: uniqueReference("split"), settlementAccounts };
}

describe("REST create payment intent: settlementAccounts", () => {
  let server: TestServer;
  let client: RestClient;
  /** Ten accounts of merchantA. */
  let accounts: SettlementAccountJson[];
  let foreignAccount: SettlementAccountJson;

  const registerAccount = async (index: number, merchant = "merchantA") =>
    expectJson<SettlementAccountJson>(
      await client.createAccount(
        {
          accountName: `Shop ${index}`,
          accountNumber: String(1000000000 + index),
          bankName: "Test Bank",
          bankCode: "058",
        },
        merchant,
      ),
      201,
    );

  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
    accounts = [];
    for (let i = 0; i < 10; i++) accounts.push(await registerAccount(i));
    foreignAccount = await registerAccount(99, "merchantB");
  });
  after(() => server.close());

  const id = (index: number) => accounts[index]!.id;

  it("shows the splits in the create response in the order given, splitAmount as a string", async () => {
    const intent = expectJson<PaymentIntentJson>(
      await client.createIntent(
        bodyWith([
          { settlementAccountId: id(1), splitAmount: 6000 },
          { settlementAccountId: id(0), splitAmount: 2500 },
        ]),
      ),
      201,
    );
    assert.deepEqual(intent.settlementAccounts, [
      { settlementAccountId: id(1), splitAmount: "6000" },
      { settlementAccountId: id(0), splitAmount: "2500" },
    ]);
    assert.equal(intent.totalAmount, "10000");
  });

  it("accepts splits that add up to exactly the amount", async () => {
    const intent = expectJson<PaymentIntentJson>(
      await client.createIntent(
        bodyWith([
          { settlementAccountId: id(0), splitAmount: 4000 },
          { settlementAccountId: id(1), splitAmount: 6000 },
        ]),
      ),
      201,
    );
    assert.deepEqual(
      intent.settlementAccounts.map((s) => s.splitAmount),
      ["4000", "6000"],
    );
  });

  it("accepts ten splits", async () => {
    const splits = accounts.map((account) => ({ settlementAccountId: account.id, splitAmount: 100 }));
    const intent = expectJson<PaymentIntentJson>(await client.createIntent(bodyWith(splits)), 201);
    assert.deepEqual(
      intent.settlementAccounts,
      accounts.map((account) => ({ settlementAccountId: account.id, splitAmount: "100" })),
    );
  });

  it("answers settlementAccounts [] when none are given, and for an empty list", async () => {
    const omitted = bodyWith(undefined);
    delete omitted["settlementAccounts"];
    assert.deepEqual(expectJson<PaymentIntentJson>(await client.createIntent(omitted), 201).settlementAccounts, []);
    assert.deepEqual(expectJson<PaymentIntentJson>(await client.createIntent(bodyWith([])), 201).settlementAccounts, []);
  });

  const refused: { name: string; splits: () => unknown; amount?: number; message: () => RegExp }[] = [
    {
      name: "an unknown account id",
      splits: () => [{ settlementAccountId: "sa_00000000-0000-7000-8000-000000000000", splitAmount: 100 }],
      message: () => /^settlementAccounts\[0\]\.settlementAccountId\b/,
    },
    {
      name: "another merchant's account id",
      splits: () => [
        { settlementAccountId: id(0), splitAmount: 100 },
        { settlementAccountId: foreignAccount.id, splitAmount: 100 },
      ],
      message: () => /^settlementAccounts\[1\]\.settlementAccountId\b/,
    },
    {
      name: "the same account twice",
      splits: () => [
        { settlementAccountId: id(0), splitAmount: 100 },
        { settlementAccountId: id(0), splitAmount: 200 },
      ],
      message: () => /^settlementAccounts\[1\]\.settlementAccountId\b.*twice/,
    },
    {
      name: "splitAmount 0",
      splits: () => [{ settlementAccountId: id(0), splitAmount: 0 }],
      message: () => /^settlementAccounts\[0\]\.splitAmount\b/,
    },
    {
      name: "a negative splitAmount",
      splits: () => [{ settlementAccountId: id(0), splitAmount: -5 }],
      message: () => /^settlementAccounts\[0\]\.splitAmount\b/,
    },
    {
      name: "splitAmount as a string",
      splits: () => [{ settlementAccountId: id(0), splitAmount: "100" }],
      message: () => /^settlementAccounts\[0\]\.splitAmount\b/,
    },
    {
      name: "a fractional splitAmount",
      splits: () => [{ settlementAccountId: id(0), splitAmount: 1.5 }],
      message: () => /^settlementAccounts\[0\]\.splitAmount\b/,
    },
    {
      name: "splitAmount missing",
      splits: () => [{ settlementAccountId: id(0) }],
      message: () => /^settlementAccounts\[0\]\.splitAmount\b/,
    },
    {
      name: "settlementAccountId missing",
      splits: () => [{ splitAmount: 100 }],
      message: () => /^settlementAccounts\[0\]\.settlementAccountId\b/,
    },
    {
      name: "splits that add up to more than the amount",
      splits: () => [
        { settlementAccountId: id(0), splitAmount: 6000 },
        { settlementAccountId: id(1), splitAmount: 4001 },
      ],
      message: () => /^settlementAccounts\b.*10001.*10000/,
    },
    {
      name: "11 splits",
      splits: () => [
        ...accounts.map((account) => ({ settlementAccountId: account.id, splitAmount: 1 })),
        { settlementAccountId: foreignAccount.id, splitAmount: 1 },
      ],
      message: () => /^settlementAccounts\b.*at most 10/,
    },
    { name: "an object instead of a list", splits: () => ({}), message: () => /^settlementAccounts must be an array/ },
    { name: "a string item", splits: () => [id(0)], message: () => /^settlementAccounts\[0\] must be an object/ },
    { name: "a null item", splits: () => [null], message: () => /^settlementAccounts\[0\]/ },
  ];
  for (const { name, splits, amount, message } of refused) {
    it(`answers 400 for ${name}`, async () => {
      expectError(await client.createIntent(bodyWith(splits(), amount)), 400, message());
    });
  }

  it("does not tell another merchant's account from an unknown one", async () => {
    const unknownId = "sa_00000000-0000-7000-8000-000000000000";
    const foreign = expectError(
      await client.createIntent(bodyWith([{ settlementAccountId: foreignAccount.id, splitAmount: 1 }])),
      400,
      /settlementAccountId/,
    );
    const unknown = expectError(
      await client.createIntent(bodyWith([{ settlementAccountId: unknownId, splitAmount: 1 }])),
      400,
      /settlementAccountId/,
    );
    assert.equal(foreign.replace(foreignAccount.id, "<id>"), unknown.replace(unknownId, "<id>"));
  });

  it("stores nothing when a split is refused, so the reference stays free", async () => {
    const reference = uniqueReference("split-refused");
    const refusedBody = { ...bodyWith([{ settlementAccountId: foreignAccount.id, splitAmount: 1 }]), clientReference: reference };
    expectError(await client.createIntent(refusedBody), 400, /settlementAccountId/);
    const list = expectJson<PaymentIntentListJson>(await client.listIntents({ clientReference: reference }), 200);
    assert.deepEqual(list, { paymentIntents: [] });

    const validBody = { ...bodyWith([{ settlementAccountId: id(0), splitAmount: 1 }]), clientReference: reference };
    expectJson<PaymentIntentJson>(await client.createIntent(validBody), 201);
  });
});
