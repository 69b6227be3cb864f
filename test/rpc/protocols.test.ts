import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type CallOptions, type Client, type Interceptor } from "@connectrpc/connect";
import {
  type CreatePaymentIntentRequestSchema,
  DeletePaymentIntentResponseSchema,
  PaymentIntentListItemSchema,
  PaymentIntentSchema,
  PaymentIntentService,
  type PaymentIntent,
  type PaymentIntentListItem,
} from "../../gen/payments/v2/payment_intent_pb.js";
import { SettlementAccountService, type SettlementAccount } from "../../gen/payments/v2/settlement_account_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { expectConnectError, restCall, rpcProtocols } from "./support/rpc-helpers.js";
import { checkoutTokenSource } from "../../src/lib/checkout-token.js";

/** The plain-object form of a create request these cases build. */
type CreateInit = Exclude<MessageInitShape<typeof CreatePaymentIntentRequestSchema>, { $typeName: string }>;

const uuidV7 = "[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
const cardMethod = {
  id: "pm_card",
  type: "card",
  attributes: [{ name: "Visa" }, { name: "Mastercard" }, { name: "Verve" }],
};
const ussdMethod = { id: "pm_ussd", type: "ussd", attributes: [{ name: "USSD code" }] };

/** Newest first: createdAt desc, then id desc (§4.2). */
function isNewestFirst(items: PaymentIntentListItem[]): boolean {
  return items.every((item, i) => {
    const prev = items[i - 1];
    if (!prev) return true;
    const a = timestampDate(prev.createdAt!).getTime();
    const b = timestampDate(item.createdAt!).getTime();
    return a > b || (a === b && prev.id > item.id);
  });
}

// The same cases over every transport: each protocol gets its own server, so
// its lists hold exactly what its own cases created.
for (const protocol of rpcProtocols) {
  describe(`RPC over ${protocol.name}`, () => {
    let server: TestServer;
    let intents: Client<typeof PaymentIntentService>;
    let accounts: Client<typeof SettlementAccountService>;
    let account: SettlementAccount;
    const contentTypes: string[] = [];
    const recordContentType: Interceptor = (next) => async (req) => {
      const res = await next(req);
      contentTypes.push(res.header.get("content-type") ?? "");
      return res;
    };
    const ref = (name: string) => `${protocol.name.replace(/[^A-Za-z0-9]+/g, "-")}-${name}`;

    /** Call options for a merchant's key, or for a raw Authorization value. */
    const as = (merchant = "merchantA", extra: CallOptions = {}): CallOptions => ({
      ...extra,
      headers: { authorization: server.bearer(merchant) },
    });
    const request = (name: string, init: Partial<CreateInit> = {}): CreateInit => ({
      amount: 50000n,
      customerEmail: "ada@example.com",
      clientReference: ref(name),
      ...init,
    });

    before(async () => {
      server = await startTestServer();
      const transport = protocol.transport(server.url, [recordContentType]);
      intents = createClient(PaymentIntentService, transport);
      accounts = createClient(SettlementAccountService, transport);
      account = await accounts.createSettlementAccount(
        { accountName: "Ada Stores", accountNumber: "0123456789", bankName: "Test Bank", bankCode: "058" },
        as(),
      );
    });
    after(() => server.close());

    it("speaks the protocol it names", async () => {
      contentTypes.length = 0;
      await intents.listPaymentIntents({}, as());
      assert.equal(contentTypes.length, 1);
      assert.match(contentTypes[0]!, protocol.contentType);
    });

    it("registers and lists settlement accounts", async () => {
      assert.match(account.id, new RegExp(`^sa_test_${uuidV7}$`));
      assert.equal(account.accountName, "Ada Stores");
      assert.equal(account.accountNumber, "0123456789");
      assert.equal(account.bankName, "Test Bank");
      assert.equal(account.bankCode, "058");
      const list = await accounts.listSettlementAccounts({}, as());
      assert.deepEqual(list.settlementAccounts, [account]);
      const other = await accounts.listSettlementAccounts({}, as("merchantB"));
      assert.deepEqual(other.settlementAccounts, []);
    });

    it("creates a payment intent with exactly the §2.1 fields", async () => {
      const startedAt = Date.now();
      const headers: Headers[] = [];
      const intent = await intents.createPaymentIntent(
        request("create", {
          paymentMethod: ["card", "ussd"],
          settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 20000n }],
        }),
        as("merchantA", { onHeader: (h) => headers.push(h) }),
      );
      const afterCall = Date.now();

      assert.match(intent.id, new RegExp(`^pi_test_${uuidV7}$`));
      // The token is ≥ 128 random bits: 32 bytes in base64url.
      assert.match(intent.checkoutLink, new RegExp(`^${server.url}/checkout/${checkoutTokenSource}$`));
      const createdAt = timestampDate(intent.createdAt!).getTime();
      assert.ok(createdAt >= startedAt && createdAt <= afterCall, "createdAt is the time of the call");
      assert.deepEqual(intent.updatedAt, intent.createdAt);
      assert.deepEqual(
        intent,
        create(PaymentIntentSchema, {
          id: intent.id,
          amount: 50000n,
          totalAmount: 50000n,
          currency: "NGN",
          receiptEmail: "ada@example.com",
          customerEmail: "ada@example.com",
          country: "NG",
          status: "pending",
          checkoutLink: intent.checkoutLink,
          clientReference: ref("create"),
          paymentMethods: [cardMethod, ussdMethod],
          meta: [],
          settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 20000n }],
          createdAt: intent.createdAt,
          updatedAt: intent.updatedAt,
          amountRefunded: 0n,
          livemode: false,
        }),
      );
      assert.equal(typeof intent.amount, "bigint");
      assert.equal(intent.callbackUrl, undefined);
      assert.equal(intent.transaction, undefined);
      assert.equal(headers.length, 1);
      assert.equal(headers[0]!.get("idempotent-replayed"), null, "a first create is not a replay");
    });

    it("keeps a given receiptEmail and callbackUrl, and defaults paymentMethods to every enabled method", async () => {
      const intent = await intents.createPaymentIntent(
        request("defaults", { receiptEmail: "books@example.com", callbackUrl: "https://shop.example.com/done" }),
        as(),
      );
      assert.equal(intent.receiptEmail, "books@example.com");
      assert.equal(intent.customerEmail, "ada@example.com");
      assert.equal(intent.callbackUrl, "https://shop.example.com/done");
      assert.deepEqual(
        intent.paymentMethods.map((m) => [m.id, m.type]),
        [
          ["pm_card", "card"],
          ["pm_bank_transfer", "bank_transfer"],
          ["pm_ussd", "ussd"],
          ["pm_paystack", "paystack"],
        ],
      );
      assert.deepEqual(intent.settlementAccounts, []);
    });

    it("replays an identical create with the same intent and idempotent-replayed: true", async () => {
      const first = await intents.createPaymentIntent(request("replay", { paymentMethod: ["card"] }), as());
      const headers: Headers[] = [];
      const again = await intents.createPaymentIntent(
        request("replay", { paymentMethod: ["card"] }),
        as("merchantA", { onHeader: (h) => headers.push(h) }),
      );
      assert.equal(again.id, first.id);
      assert.deepEqual(again, first);
      assert.equal(headers.length, 1);
      assert.equal(headers[0]!.get("idempotent-replayed"), "true");
      const { paymentIntents } = await intents.listPaymentIntents({ clientReference: ref("replay") }, as());
      assert.deepEqual(
        paymentIntents.map((p) => p.id),
        [first.id],
        "the replay wrote no second intent",
      );
    });

    it("refuses a different request with a used clientReference: AlreadyExists, as REST's 409", async () => {
      const first = await intents.createPaymentIntent(request("conflict"), as());
      const error = await expectConnectError(
        intents.createPaymentIntent(request("conflict", { amount: 50001n }), as()),
        Code.AlreadyExists,
        `clientReference ${ref("conflict")} is already used by payment intent ${first.id} with a different request`,
      );
      const rest = await restCall(`${server.restUrl}/v2/payment-intents`, {
        method: "POST",
        authorization: server.bearer(),
        body: { amount: 50001, customerEmail: "ada@example.com", clientReference: ref("conflict") },
      });
      assert.equal(rest.status, 409);
      assert.deepEqual(rest.body, { status: 409, title: "Conflict", message: error.rawMessage });
    });

    const invalidAmounts: { name: string; rpc: bigint; rest: number }[] = [
      { name: "a zero amount", rpc: 0n, rest: 0 },
      { name: "a negative amount", rpc: -5n, rest: -5 },
      { name: "an amount above 10^12", rpc: 1_000_000_000_001n, rest: 1_000_000_000_001 },
    ];
    for (const amount of invalidAmounts) {
      it(`refuses ${amount.name} with InvalidArgument and REST's 400 message`, async () => {
        const error = await expectConnectError(
          intents.createPaymentIntent(request(`amount-${amount.rest}`, { amount: amount.rpc }), as()),
          Code.InvalidArgument,
          /amount/,
        );
        const rest = await restCall(`${server.restUrl}/v2/payment-intents`, {
          method: "POST",
          authorization: server.bearer(),
          body: { amount: amount.rest, customerEmail: "ada@example.com", clientReference: ref(`amount-${amount.rest}`) },
        });
        assert.equal(rest.status, 400);
        assert.deepEqual(rest.body, { status: 400, title: "Bad Request", message: error.rawMessage });
      });
    }

    it("lists newest first and pages with nextPageToken", async () => {
      const created: PaymentIntent[] = [];
      for (const n of [1, 2, 3]) {
        created.push(
          await intents.createPaymentIntent(
            request(`list-${n}`, {
              settlementAccounts: n === 2 ? [{ settlementAccountId: account.id, splitAmount: 100n }] : [],
            }),
            as(),
          ),
        );
      }
      const all = await intents.listPaymentIntents({ pageSize: 100 }, as());
      assert.equal(all.nextPageToken, "", "no token when everything fits");
      assert.ok(all.paymentIntents.length >= 3);
      assert.deepEqual(
        all.paymentIntents.slice(0, 3).map((p) => p.id),
        created.map((p) => p.id).reverse(),
      );
      assert.ok(isNewestFirst(all.paymentIntents), "createdAt desc, then id desc");
      assert.ok(all.paymentIntents.every((p) => p.$typeName === "payments.v2.PaymentIntentListItem"));
      // Every item carries a settlement account: its first split's, or the merchant's earliest.
      assert.ok(all.paymentIntents.every((p) => p.settlementAccount?.id === account.id));

      const walked: string[] = [];
      let pageToken = "";
      let pages = 0;
      do {
        const page = await intents.listPaymentIntents({ pageSize: 2, pageToken }, as());
        assert.ok(page.paymentIntents.length >= 1 && page.paymentIntents.length <= 2);
        walked.push(...page.paymentIntents.map((p) => p.id));
        pageToken = page.nextPageToken;
        pages++;
        assert.ok(pages <= all.paymentIntents.length, "paging terminates");
      } while (pageToken !== "");
      assert.deepEqual(walked, all.paymentIntents.map((p) => p.id));
      assert.equal(pages, Math.ceil(all.paymentIntents.length / 2));
    });

    it("refuses a page size outside 1–100 and a forged page token with InvalidArgument", async () => {
      await expectConnectError(intents.listPaymentIntents({ pageSize: 0 }, as()), Code.InvalidArgument, /pageSize/);
      await expectConnectError(intents.listPaymentIntents({ pageSize: 101 }, as()), Code.InvalidArgument, /pageSize/);
      await intents.createPaymentIntent(request("token-1"), as());
      await intents.createPaymentIntent(request("token-2"), as());
      const { nextPageToken } = await intents.listPaymentIntents({ pageSize: 1 }, as());
      assert.notEqual(nextPageToken, "");
      const forged = `${nextPageToken.slice(0, -2)}${nextPageToken.endsWith("AA") ? "BB" : "AA"}`;
      await expectConnectError(intents.listPaymentIntents({ pageToken: forged }, as()), Code.InvalidArgument, /pageToken/);
      // A token is bound to its merchant: merchantB cannot replay merchantA's.
      await expectConnectError(
        intents.listPaymentIntents({ pageToken: nextPageToken }, as("merchantB")),
        Code.InvalidArgument,
        /pageToken/,
      );
    });

    it("gets one intent as a list item with its settlement account", async () => {
      const intent = await intents.createPaymentIntent(
        request("get", { settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 5000n }] }),
        as(),
      );
      const got = await intents.getPaymentIntent({ id: intent.id }, as());
      const { settlementAccounts: _splits, $typeName: _type, ...common } = intent;
      assert.deepEqual(got, create(PaymentIntentListItemSchema, { ...common, settlementAccount: account }));
    });

    it("deletes an intent, which then answers NotFound everywhere", async () => {
      const intent = await intents.createPaymentIntent(request("delete"), as());
      const deleted = await intents.deletePaymentIntent({ id: intent.id }, as());
      assert.deepEqual(
        deleted,
        create(DeletePaymentIntentResponseSchema, { status: 200, title: "OK", message: `Payment intent ${intent.id} deleted` }),
      );
      const notFound = `payment intent ${intent.id} not found`;
      await expectConnectError(intents.getPaymentIntent({ id: intent.id }, as()), Code.NotFound, notFound);
      await expectConnectError(intents.deletePaymentIntent({ id: intent.id }, as()), Code.NotFound, notFound);
      const { paymentIntents } = await intents.listPaymentIntents({ pageSize: 100 }, as());
      assert.ok(!paymentIntents.some((p) => p.id === intent.id), "a deleted intent leaves the list");
      // The reference stays taken forever, even by an identical request.
      await expectConnectError(intents.createPaymentIntent(request("delete"), as()), Code.AlreadyExists, /deleted/);
    });

    it("answers NotFound for an unknown id", async () => {
      await expectConnectError(
        intents.deletePaymentIntent({ id: "pi_00000000-0000-7000-8000-000000000000" }, as()),
        Code.NotFound,
        "payment intent pi_00000000-0000-7000-8000-000000000000 not found",
      );
    });

    const badAuthorizations: { name: string; value?: string }[] = [
      { name: "no Authorization header" },
      { name: "an unknown key", value: "Bearer sk_test_not_a_real_key" },
      { name: "a non-Bearer scheme", value: "Basic YTpi" },
      { name: "an empty key", value: "Bearer  " },
    ];
    for (const auth of badAuthorizations) {
      it(`answers Unauthenticated to ${auth.name}`, async () => {
        const options: CallOptions = auth.value === undefined ? {} : { headers: { authorization: auth.value } };
        await expectConnectError(intents.createPaymentIntent(request("unauthenticated"), options), Code.Unauthenticated);
        await expectConnectError(intents.listPaymentIntents({}, options), Code.Unauthenticated);
        await expectConnectError(intents.deletePaymentIntent({ id: account.id }, options), Code.Unauthenticated);
        await expectConnectError(accounts.listSettlementAccounts({}, options), Code.Unauthenticated);
      });
    }
    it("writes nothing for an unauthenticated create", async () => {
      const { paymentIntents } = await intents.listPaymentIntents({ clientReference: ref("unauthenticated") }, as());
      assert.deepEqual(paymentIntents, []);
    });

    it("hides one merchant's intents from another: NotFound, never listed", async () => {
      const intent = await intents.createPaymentIntent(request("tenant"), as());
      const notFound = `payment intent ${intent.id} not found`;
      await expectConnectError(intents.getPaymentIntent({ id: intent.id }, as("merchantB")), Code.NotFound, notFound);
      await expectConnectError(intents.deletePaymentIntent({ id: intent.id }, as("merchantB")), Code.NotFound, notFound);
      const theirs = await intents.listPaymentIntents({ pageSize: 100 }, as("merchantB"));
      assert.deepEqual(theirs.paymentIntents, []);
      // merchantB may reuse the reference: uniqueness is per merchant.
      const own = await intents.createPaymentIntent(request("tenant"), as("merchantB"));
      assert.notEqual(own.id, intent.id);
      // merchantB cannot split to merchantA's account.
      await expectConnectError(
        intents.createPaymentIntent(
          request("tenant-split", { settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 1n }] }),
          as("merchantB"),
        ),
        Code.InvalidArgument,
        /settlementAccounts\[0\]\.settlementAccountId/,
      );
      // merchantB's delete attempt changed nothing.
      assert.equal((await intents.getPaymentIntent({ id: intent.id }, as())).status, "pending");
    });
  });
}
