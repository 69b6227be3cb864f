import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import {
  assertOnlyKeys,
  createRestClient,
  expectError,
  expectJson,
  settlementAccountIdPattern,
  settlementAccountKeys,
  type RestClient,
  type SettlementAccountJson,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

interface AccountList {
  settlementAccounts: SettlementAccountJson[];
}

let accountNumberCounter = 3000000000;

function validAccount(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  accountNumberCounter += 1;
  return {
    accountName: "Ada Lovelace Stores",
    accountNumber: String(accountNumberCounter),
    bankName: "Guaranty Trust Bank",
    bankCode: "058",
    ...overrides,
  };
}

function without(key: string): Record<string, unknown> {
  const body = validAccount();
  delete body[key];
  return body;
}

describe("REST settlement accounts", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2025-09-01T08:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
  });
  after(() => server.close());

  it("answers 201 with exactly the §2.4 account", async () => {
    const res = await client.createAccount({
      accountName: "Ada Lovelace Stores",
      accountNumber: "0123456789",
      bankName: "Guaranty Trust Bank",
      bankCode: "058",
    });
    const account = expectJson<SettlementAccountJson>(res, 201);
    assertOnlyKeys(account, settlementAccountKeys, "settlement account");
    assert.match(account.id, settlementAccountIdPattern);
    assert.deepEqual(account, {
      id: account.id,
      accountName: "Ada Lovelace Stores",
      accountNumber: "0123456789",
      bankName: "Guaranty Trust Bank",
      bankCode: "058",
      createdAt: "2025-09-01T08:00:00.000Z",
      updatedAt: "2025-09-01T08:00:00.000Z",
      livemode: false,
    });
  });

  const accepted: { name: string; overrides: Record<string, unknown> }[] = [
    { name: "a 6-digit bankCode", overrides: { bankCode: "090267" } },
    { name: "a 3-digit bankCode", overrides: { bankCode: "044" } },
    { name: "names of 100 characters", overrides: { accountName: "n".repeat(100), bankName: "b".repeat(100) } },
    { name: "names of 1 character", overrides: { accountName: "A", bankName: "B" } },
    { name: "non-ASCII names", overrides: { accountName: "Ọlájídé Àdìsá", bankName: "Ẹ̀kọ́ Bank" } },
  ];
  for (const { name, overrides } of accepted) {
    it(`accepts ${name}`, async () => {
      const body = validAccount(overrides);
      const account = expectJson<SettlementAccountJson>(await client.createAccount(body), 201);
      assert.deepEqual(
        [account.accountName, account.accountNumber, account.bankName, account.bankCode],
        [body["accountName"], body["accountNumber"], body["bankName"], body["bankCode"]],
      );
    });
  }

  const refused: { name: string; body: unknown; message: RegExp }[] = [
    { name: "accountNumber of 9 digits", body: validAccount({ accountNumber: "012345678" }), message: /^accountNumber\b/ },
    { name: "accountNumber of 11 digits", body: validAccount({ accountNumber: "01234567890" }), message: /^accountNumber\b/ },
    { name: "accountNumber with letters", body: validAccount({ accountNumber: "01234abcde" }), message: /^accountNumber\b/ },
    { name: "accountNumber as a number", body: validAccount({ accountNumber: 1234567890 }), message: /^accountNumber\b/ },
    { name: "accountNumber missing", body: without("accountNumber"), message: /^accountNumber\b/ },
    { name: "bankCode of 2 digits", body: validAccount({ bankCode: "05" }), message: /^bankCode\b/ },
    { name: "bankCode of 7 digits", body: validAccount({ bankCode: "0582345" }), message: /^bankCode\b/ },
    { name: "bankCode with a letter", body: validAccount({ bankCode: "05A" }), message: /^bankCode\b/ },
    { name: "bankCode missing", body: without("bankCode"), message: /^bankCode\b/ },
    { name: "accountName empty", body: validAccount({ accountName: "" }), message: /^accountName\b/ },
    { name: "accountName blank", body: validAccount({ accountName: "   " }), message: /^accountName\b/ },
    { name: "accountName of 101 characters", body: validAccount({ accountName: "n".repeat(101) }), message: /^accountName\b/ },
    { name: "accountName missing", body: without("accountName"), message: /^accountName\b/ },
    { name: "bankName empty", body: validAccount({ bankName: "" }), message: /^bankName\b/ },
    { name: "bankName of 101 characters", body: validAccount({ bankName: "b".repeat(101) }), message: /^bankName\b/ },
    { name: "an unknown field", body: validAccount({ currency: "NGN" }), message: /unknown field currency\b/ },
    { name: "an id chosen by the client", body: validAccount({ id: "sa_mine" }), message: /unknown field id\b/ },
    { name: "a body that is an array", body: [validAccount()], message: /must be a JSON object/ },
  ];
  for (const { name, body, message } of refused) {
    it(`answers 400 for ${name}`, async () => {
      expectError(await client.createAccount(body, "merchantB"), 400, message);
    });
  }

  it("stored none of the refused accounts", async () => {
    assert.deepEqual(expectJson<AccountList>(await client.listAccounts("merchantB"), 200), { settlementAccounts: [] });
  });

  it("answers 409 for the same bankCode and accountNumber, and allows them at another bank", async () => {
    const body = validAccount({ bankCode: "011" });
    const first = expectJson<SettlementAccountJson>(await client.createAccount(body), 201);
    const message = expectError(
      await client.createAccount({ ...body, accountName: "Another Name", bankName: "Another Bank" }),
      409,
      new RegExp(`${body["accountNumber"]}.*${body["bankCode"]}.*already registered`),
    );
    assert.match(message, new RegExp(first.id));
    expectJson(await client.createAccount({ ...body, bankCode: "057" }), 201);
  });

  it("lets two merchants register the same bank account", async () => {
    const body = validAccount();
    expectJson(await client.createAccount(body, "merchantA"), 201);
    expectJson(await client.createAccount(body, "merchantB"), 201);
  });
});

describe("REST list settlement accounts", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2025-09-02T08:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
  });
  after(() => server.close());

  it("answers {\"settlementAccounts\": []} for a merchant without accounts", async () => {
    const res = await client.listAccounts();
    assert.deepEqual(expectJson<AccountList>(res, 200), { settlementAccounts: [] });
  });

  it("lists the merchant's own accounts, newest first, exactly as created", async () => {
    const ofA: SettlementAccountJson[] = [];
    const ofB: SettlementAccountJson[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(60_000);
      ofA.push(expectJson<SettlementAccountJson>(await client.createAccount(validAccount(), "merchantA"), 201));
      ofB.push(expectJson<SettlementAccountJson>(await client.createAccount(validAccount(), "merchantB"), 201));
    }
    // Two more in one millisecond: the later one still comes first.
    ofA.push(expectJson<SettlementAccountJson>(await client.createAccount(validAccount(), "merchantA"), 201));

    const listA = expectJson<AccountList>(await client.listAccounts("merchantA"), 200);
    assertOnlyKeys(listA, ["settlementAccounts"], "list response");
    for (const account of listA.settlementAccounts) assertOnlyKeys(account, settlementAccountKeys, "settlement account");
    assert.deepEqual(listA, { settlementAccounts: [...ofA].reverse() });
    assert.deepEqual(expectJson<AccountList>(await client.listAccounts("merchantB"), 200), {
      settlementAccounts: [...ofB].reverse(),
    });
  });

  it("refuses query parameters it does not know", async () => {
    expectError(await client.request("GET", "/v2/settlement-accounts?limit=5"), 400, /unknown query parameter limit\b/);
  });
});

describe("REST list settlement accounts: paging", () => {
  let server: TestServer;
  let client: RestClient;
  const created: SettlementAccountJson[] = [];
  before(async () => {
    const clock = createManualClock("2025-09-03T08:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
    for (let i = 0; i < 7; i++) {
      clock.advance(1000);
      created.push(expectJson<SettlementAccountJson>(await client.createAccount(validAccount(), "merchantA"), 201));
    }
  });
  after(() => server.close());

  it("pages newest first with nextPageToken and a Link header, to the last page", async () => {
    const newestFirst = [...created].reverse();
    const seen: SettlementAccountJson[] = [];
    let path = "/v2/settlement-accounts?pageSize=3";
    for (let pageNumber = 0; pageNumber < 3; pageNumber++) {
      const res = await client.request("GET", path);
      const page = expectJson<AccountList & { nextPageToken?: string }>(res, 200);
      seen.push(...page.settlementAccounts);
      if (pageNumber < 2) {
        assert.equal(page.settlementAccounts.length, 3);
        assert.equal(typeof page.nextPageToken, "string");
        const link = res.headers.get("link") ?? "";
        assert.match(link, /^<\/v1\/v2\/settlement-accounts\?pageSize=3&pageToken=[^>]+>; rel="next"$/);
        path = `/v2/settlement-accounts?pageSize=3&pageToken=${encodeURIComponent(page.nextPageToken!)}`;
      } else {
        assert.deepEqual(Object.keys(page), ["settlementAccounts"], "no nextPageToken on the last page");
        assert.equal(res.headers.get("link"), null);
      }
    }
    assert.deepEqual(seen, newestFirst);
  });

  it("defaults to 50 per page and refuses a page size outside 1–100 or a token from elsewhere", async () => {
    assert.equal(expectJson<AccountList>(await client.listAccounts("merchantA"), 200).settlementAccounts.length, 7);
    for (const size of ["0", "101", "x", "1.5"]) {
      expectError(await client.request("GET", `/v2/settlement-accounts?pageSize=${size}`), 400, /pageSize/);
    }
    const first = expectJson<{ nextPageToken: string }>(await client.request("GET", "/v2/settlement-accounts?pageSize=1"), 200);
    // Another merchant's token, and a payment intent listing's token, are refused.
    expectError(
      await client.request("GET", `/v2/settlement-accounts?pageToken=${encodeURIComponent(first.nextPageToken)}`, { merchant: "merchantB" }),
      400,
      /pageToken is not valid/,
    );
    expectError(
      await client.request("GET", `/v2/payment-intents?pageToken=${encodeURIComponent(first.nextPageToken)}`),
      400,
      /pageToken is not valid/,
    );
  });
});

describe("REST settlement accounts: the per-merchant limit", () => {
  it("refuses the account past the limit with 409, and keeps serving the rest", async () => {
    const server = await startTestServer({ caps: { maxSettlementAccounts: 2 } });
    try {
      const client = createRestClient(server);
      expectJson(await client.createAccount(validAccount()), 201);
      expectJson(await client.createAccount(validAccount()), 201);
      expectError(await client.createAccount(validAccount()), 409, /^a merchant may register at most 2 settlement accounts; this one has reached that$/);
      expectJson(await client.createAccount(validAccount(), "merchantB"), 201);
      assert.equal(expectJson<AccountList>(await client.listAccounts(), 200).settlementAccounts.length, 2);
    } finally {
      await server.close();
    }
  });
});
