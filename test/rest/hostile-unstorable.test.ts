import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { watchStoreCalls } from "../hostile/support/store-calls.js";
import { http1 } from "../hostile/support/wire.js";
import { createRestClient, expectJson, type RestClient, type SettlementAccountJson } from "../support/rest-client.js";
import { startTestServer, testStoreKind, type TestServer } from "../support/test-server.js";

/** What PostgreSQL's text cannot hold as sent: NUL, and UTF-16 surrogates without their pair. */
const unstorable: [string, string][] = [
  ["NUL", "\u0000"],
  ["a lone high surrogate", "\ud800"],
  ["a lone low surrogate", "\udc00"],
];

const message = (field: string) => `${field} must not contain NUL characters or unpaired surrogates`;

/** Create-intent fields, each with the body fields that put the text in it. */
const intentFields: [string, (t: string, accountId: string) => Record<string, unknown>][] = [
  ["customerEmail", (t) => ({ customerEmail: `ada${t}@example.com` })],
  ["receiptEmail", (t) => ({ receiptEmail: `${t}ada@example.com` })],
  ["clientReference", (t) => ({ clientReference: `order-${t}` })],
  ["currency", (t) => ({ currency: `NG${t}` })],
  ["callbackUrl", (t) => ({ callbackUrl: `https://shop.example.com/paid?x=${t}` })],
  ["paymentMethod[1]", (t) => ({ paymentMethod: ["card", `ussd${t}`] })],
  ["paymentMethod[0]", (t) => ({ paymentMethod: [{ type: `card${t}` }] })],
  ["settlementAccounts[0].settlementAccountId", (t, accountId) => ({ settlementAccounts: [{ settlementAccountId: `${accountId}${t}`, splitAmount: 100 }] })],
];

describe(`REST input no store can hold (${testStoreKind} store)`, () => {
  let server: TestServer;
  let client: RestClient;
  let account: SettlementAccountJson;
  let intentId: string;
  let store: ReturnType<typeof watchStoreCalls>;

  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
    account = expectJson<SettlementAccountJson>(
      await client.createAccount({ accountName: "Ada Stores", accountNumber: "0123456789", bankName: "Example Bank", bankCode: "058" }),
      201,
    );
    intentId = expectJson<{ id: string }>(await client.createIntent({ amount: 500, customerEmail: "ada@example.com", clientReference: "unstorable-0" }), 201).id;
    store = watchStoreCalls({ intents: server.intents, accounts: server.accounts });
  });
  after(async () => {
    store.restore();
    await server.close();
  });

  /** A 400 naming the field, with no store call behind it. */
  async function expectRefused(send: () => Promise<{ status: number; text: string }>, field: string) {
    store.reset();
    const res = await send();
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(JSON.parse(res.text), { status: 400, title: "Bad Request", message: message(field) });
    assert.deepEqual(store.calls(), [], "refused before any store call");
  }

  // Fails on e1d5b66: memory answered other messages or kept the text; PostgreSQL stored lone surrogates and failed on NUL.
  describe("refused with 400 naming the field, before any store call", () => {
    for (const [name, text] of unstorable) {
      for (const [field, body] of intentFields) {
        it(`refuses ${name} in ${field} of a create`, async () => {
          await expectRefused(() => client.createIntent({ amount: 500, customerEmail: "ada@example.com", clientReference: "unstorable-1", ...body(text, account.id) }), field);
        });
      }

      for (const field of ["accountName", "accountNumber", "bankName", "bankCode"]) {
        it(`refuses ${name} in ${field} of a settlement account`, async () => {
          const body: Record<string, string> = { accountName: "Ada Stores", accountNumber: "9876543210", bankName: "Example Bank", bankCode: "044" };
          body[field] = `${body[field]}${text}`;
          await expectRefused(() => client.createAccount(body), field);
        });
      }
    }

    // A query string is bytes: a lone surrogate cannot be written in one (%ED%A0%80 decodes to U+FFFD); NUL can.
    for (const param of ["clientReference", "status", "pageToken"]) {
      it(`refuses NUL (%00) in the list's ${param}`, async () => {
        await expectRefused(() => client.listIntents(`${param}=ab%00c`), param);
      });
    }

    for (const method of ["GET", "DELETE"]) {
      for (const id of ["%00", "pi_%00", "pi_%00x"]) {
        it(`refuses NUL in the path id of ${method} …/payment-intents/${id}`, async () => {
          await expectRefused(async () => {
            const res = await http1(server.port, method, `/v1/v2/payment-intents/${id}`, { authorization: server.bearer() });
            return { status: res.status, text: res.body.toString() };
          }, "id");
        });
      }
    }

    it("stored none of it, and the intent and account made before are untouched", async () => {
      const intents = await server.intents.list({ livemode: false, merchantId: "merchantA", limit: 10, now: new Date() });
      assert.deepEqual(intents.map((row) => [row.intent.id, row.intent.status]), [[intentId, "pending"]]);
      assert.deepEqual((await server.accounts.listByMerchant({ livemode: false, merchantId: "merchantA", limit: 100 })).map((a) => a.id), [account.id]);
    });
  });

  // Pins README "Unknown path: 404" and names of "1–100 characters" beyond ASCII (e1d5b66 did the same).
  describe("text the stores can hold, or that never reaches them", () => {
    for (const method of ["GET", "DELETE"]) {
      it(`answers an id that is not UTF-8 (%ED%A0%80, an encoded surrogate) on ${method} with 404, no store call`, async () => {
        store.reset();
        const res = await http1(server.port, method, "/v1/v2/payment-intents/%ED%A0%80", { authorization: server.bearer() });
        assert.deepEqual([res.status, JSON.parse(res.body.toString()).message], [404, "no route for /v1/v2/payment-intents/%ED%A0%80"]);
        assert.deepEqual(store.calls(), []);
      });
    }

    it("stores and returns text with well-formed surrogate pairs and other non-ASCII exactly", async () => {
      const name = "Àdá 💸 Stores";
      const created = expectJson<SettlementAccountJson>(
        await client.createAccount({ accountName: name, accountNumber: "1112223334", bankName: "Bánk 🏦", bankCode: "035" }),
        201,
      );
      assert.deepEqual([created.accountName, created.bankName], [name, "Bánk 🏦"]);
      const listed = expectJson<{ settlementAccounts: SettlementAccountJson[] }>(await client.listAccounts(), 200);
      assert.deepEqual(listed.settlementAccounts.find((a) => a.id === created.id)?.accountName, name);
    });
  });
});
