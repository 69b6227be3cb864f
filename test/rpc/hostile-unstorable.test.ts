import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { CreatePaymentIntentRequestSchema, PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { SettlementAccountService, type SettlementAccount } from "../../gen/payments/v2/settlement_account_pb.js";
import { watchStoreCalls } from "../hostile/support/store-calls.js";
import { connectOutcome, envelope, grpcWebOutcome, http1 } from "../hostile/support/wire.js";
import { startTestServer, testStoreKind, type TestServer } from "../support/test-server.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";

type CreateInit = Exclude<MessageInitShape<typeof CreatePaymentIntentRequestSchema>, { $typeName: string }>;

const message = (field: string) => `${field} must not contain NUL characters or unpaired surrogates`;

/** Create-request fields, each with the request fields that put the text in it. */
const createFields: [string, (t: string, accountId: string) => Partial<CreateInit>][] = [
  ["customerEmail", (t) => ({ customerEmail: `ada${t}@example.com` })],
  ["receiptEmail", (t) => ({ receiptEmail: `${t}ada@example.com` })],
  ["clientReference", (t) => ({ clientReference: `order-${t}` })],
  ["currency", (t) => ({ currency: `NG${t}` })],
  ["callbackUrl", (t) => ({ callbackUrl: `https://shop.example.com/paid?x=${t}` })],
  ["paymentMethod[1]", (t) => ({ paymentMethod: ["card", `ussd${t}`] })],
  ["settlementAccounts[0].settlementAccountId", (t, accountId) => ({ settlementAccounts: [{ settlementAccountId: `${accountId}${t}`, splitAmount: 100n }] })],
];

// Fails on e1d5b66: memory answered other messages or kept the text; PostgreSQL failed on NUL with Internal.
describe(`RPC input no store can hold (${testStoreKind} store)`, () => {
  let server: TestServer;
  let account: SettlementAccount;
  let store: ReturnType<typeof watchStoreCalls>;

  before(async () => {
    server = await startTestServer();
    const accounts = createClient(SettlementAccountService, rpcProtocols[0]!.transport(server.url, []));
    account = await accounts.createSettlementAccount(
      { accountName: "Ada Stores", accountNumber: "0123456789", bankName: "Example Bank", bankCode: "058" },
      { headers: { authorization: server.bearer() } },
    );
    store = watchStoreCalls({ intents: server.intents, accounts: server.accounts });
  });
  after(async () => {
    store.restore();
    await server.close();
  });

  async function expectRefused(call: () => Promise<unknown>, field: string) {
    store.reset();
    await expectConnectError(call(), Code.InvalidArgument, message(field));
    assert.deepEqual(store.calls(), [], "refused before any store call");
  }

  for (const protocol of rpcProtocols) {
    // Binary protobuf carries a lone surrogate only as bytes that are not UTF-8 (refused as such, see
    // test/hostile/rpc-decode-failures.test.ts); JSON carries it as an escape.
    const texts: [string, string][] = [["NUL", "\u0000"], ...(protocol.contentType.source.includes("json") ? ([["a lone surrogate", "\ud800"]] as [string, string][]) : [])];
    describe(`over ${protocol.name}`, () => {
      let intents: Client<typeof PaymentIntentService>;
      let accounts: Client<typeof SettlementAccountService>;
      const as: CallOptions = {};

      before(() => {
        const transport = protocol.transport(server.url, []);
        intents = createClient(PaymentIntentService, transport);
        accounts = createClient(SettlementAccountService, transport);
        as.headers = { authorization: server.bearer() };
      });

      for (const [name, text] of texts) {
        for (const [field, fields] of createFields) {
          it(`refuses ${name} in ${field} of CreatePaymentIntent with InvalidArgument naming it`, async () => {
            await expectRefused(
              () => intents.createPaymentIntent({ amount: 500n, customerEmail: "ada@example.com", clientReference: "unstorable-rpc", ...fields(text, account.id) }, as),
              field,
            );
          });
        }
        for (const field of ["accountName", "accountNumber", "bankName", "bankCode"] as const) {
          it(`refuses ${name} in ${field} of CreateSettlementAccount`, async () => {
            const request = { accountName: "Ada Stores", accountNumber: "9876543210", bankName: "Example Bank", bankCode: "044" };
            request[field] = `${request[field]}${text}`;
            await expectRefused(() => accounts.createSettlementAccount(request, as), field);
          });
        }
        it(`refuses ${name} in the id of GetPaymentIntent and DeletePaymentIntent`, async () => {
          await expectRefused(() => intents.getPaymentIntent({ id: `pi_${text}` }, as), "id");
          await expectRefused(() => intents.deletePaymentIntent({ id: `pi_${text}` }, as), "id");
        });
        for (const field of ["clientReference", "status", "pageToken"] as const) {
          it(`refuses ${name} in ${field} of ListPaymentIntents`, async () => {
            await expectRefused(() => intents.listPaymentIntents({ [field]: `a${text}` }, as), field);
          });
        }
      }
    });
  }

  it("refuses NUL in a hand-framed binary message over gRPC-Web and Connect, with or without a key", async () => {
    const bytes = toBinary(CreatePaymentIntentRequestSchema, create(CreatePaymentIntentRequestSchema, { amount: 500n, customerEmail: "ada@example.com", clientReference: "a\u0000b" }));
    for (const authorization of [server.bearer(), undefined]) {
      const headers: Record<string, string> = authorization ? { authorization } : {};
      store.reset();
      const web = grpcWebOutcome(
        await http1(server.port, "POST", "/payments.v2.PaymentIntentService/CreatePaymentIntent", { "content-type": "application/grpc-web+proto", ...headers }, envelope(0, bytes)),
      );
      const connect = connectOutcome(
        await http1(server.port, "POST", "/payments.v2.PaymentIntentService/CreatePaymentIntent", { "content-type": "application/proto", ...headers }, bytes),
      );
      // Without a key the key is checked first, once the message is known to decode.
      const expected = authorization ? ["InvalidArgument", message("clientReference")] : ["Unauthenticated", "missing Authorization header: send 'Authorization: Bearer <api key>'"];
      assert.deepEqual([web.code, web.message], expected);
      assert.deepEqual([connect.code, connect.message], expected);
      assert.deepEqual(store.calls(), []);
    }
  });

  it("stored nothing but the account made first", async () => {
    assert.deepEqual(await server.intents.list({ livemode: false, merchantId: "merchantA", limit: 10, now: new Date() }), []);
    assert.deepEqual((await server.accounts.listByMerchant({ livemode: false, merchantId: "merchantA", limit: 100 })).map((a) => a.id), [account.id]);
  });
});
