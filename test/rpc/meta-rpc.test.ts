import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { RefundService } from "../../gen/payments/v2/refunds_pb.js";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { paidIntent } from "../support/refund-client.js";
import { createRestClient, uniqueReference, type RestClient } from "../support/rest-client.js";
import { startTestServer, testStoreKind, type TestServer } from "../support/test-server.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";

const entries = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ name: `${prefix}_${i}`, value: `v${i}` }));
const plain = (list: readonly { name: string; value: string }[]) => list.map(({ name, value }) => ({ name, value }));

// The meta cases of the REST suite (test/rest/meta.test.ts) over every RPC protocol: the same rules, the same messages.
for (const protocol of rpcProtocols) {
  describe(`meta over ${protocol.name} (${testStoreKind} store)`, () => {
    let server: TestServer;
    let rest: RestClient;
    let intents: Client<typeof PaymentIntentService>;
    let refunds: Client<typeof RefundService>;
    let events: Client<typeof EventService>;
    const as = (merchant = "merchantA"): CallOptions => ({ headers: { authorization: server.bearer(merchant) } });
    const createWith = (meta: { name: string; value: string }[], merchant?: string) =>
      intents.createPaymentIntent({ amount: 50000n, customerEmail: "ada@example.com", clientReference: uniqueReference("rpc-meta"), meta }, as(merchant));

    before(async () => {
      server = await startTestServer();
      rest = createRestClient(server);
      const transport = protocol.transport(server.url, []);
      intents = createClient(PaymentIntentService, transport);
      refunds = createClient(RefundService, transport);
      events = createClient(EventService, transport);
    });
    after(() => server.close());

    it("returns meta on create, get, list and the created event", async () => {
      const meta = [{ name: "order_id", value: "A-1001" }, { name: "note", value: "é😀 & [x]" }];
      const created = await createWith(meta);
      assert.deepEqual(plain(created.meta), meta);
      assert.deepEqual(plain((await intents.getPaymentIntent({ id: created.id }, as())).meta), meta);
      const listed = await intents.listPaymentIntents({ clientReference: created.clientReference }, as());
      assert.deepEqual(plain(listed.paymentIntents[0]!.meta), meta);
      const page = await events.listEvents({ paymentIntentId: created.id }, as());
      assert.deepEqual(plain(page.events[0]!.data!.meta), meta);
    });

    it("takes 50 entries, 40-character names and 500-character values, and refuses one more of each", async () => {
      assert.equal((await createWith(entries(50, "k"))).meta.length, 50);
      await createWith([{ name: "n".repeat(40), value: "v".repeat(500) }]);
      await expectConnectError(createWith(entries(51, "k")), Code.InvalidArgument, /^meta may list at most 50 entries$/);
      await expectConnectError(createWith([{ name: "n".repeat(41), value: "v" }]), Code.InvalidArgument, /^meta\[0\]\.name must be 1 to 40 characters/);
      await expectConnectError(createWith([{ name: "k", value: "v".repeat(501) }]), Code.InvalidArgument, /^meta\[0\]\.value must be at most 500 characters of text$/);
      await expectConnectError(createWith([{ name: "k", value: "1" }, { name: "k", value: "2" }]), Code.InvalidArgument, /^meta\[1\]\.name: "k" is listed twice$/);
      await expectConnectError(createWith([{ name: "k", value: "a\u0000" }]), Code.InvalidArgument, /^meta\[0\]\.value must not contain NUL characters or unpaired surrogates$/);
    });

    it("filters the list by meta with AND, never across merchants, and pages within the filter", async () => {
      const tag = uniqueReference("t");
      const a = await createWith([{ name: "tag", value: tag }, { name: "channel", value: "web" }]);
      const b = await createWith([{ name: "tag", value: tag }, { name: "channel", value: "app" }]);
      const c = await createWith([{ name: "tag", value: tag }, { name: "channel", value: "web" }]);
      await createWith([{ name: "tag", value: tag }, { name: "channel", value: "web" }], "merchantB");
      const list = async (meta: { name: string; value: string }[], extra: object = {}) => intents.listPaymentIntents({ meta, ...extra }, as());
      assert.deepEqual((await list([{ name: "tag", value: tag }])).paymentIntents.map((i) => i.id), [c.id, b.id, a.id]);
      assert.deepEqual((await list([{ name: "tag", value: tag }, { name: "channel", value: "web" }])).paymentIntents.map((i) => i.id), [c.id, a.id]);
      assert.deepEqual((await list([{ name: "tag", value: tag }, { name: "channel", value: "pos" }])).paymentIntents, []);
      const first = await list([{ name: "tag", value: tag }], { pageSize: 2 });
      assert.deepEqual(first.paymentIntents.map((i) => i.id), [c.id, b.id]);
      const second = await list([{ name: "tag", value: tag }], { pageSize: 2, pageToken: first.nextPageToken });
      assert.deepEqual([second.paymentIntents.map((i) => i.id), second.nextPageToken], [[a.id], ""]);
      await expectConnectError(list([{ name: "tag", value: "other" }], { pageToken: first.nextPageToken }), Code.InvalidArgument, /^pageToken is not valid for this query$/);
      await expectConnectError(list(entries(11, "f")), Code.InvalidArgument, /^meta may filter on at most 10 entries$/);
      await expectConnectError(list([{ name: "k", value: "1" }, { name: "k", value: "2" }]), Code.InvalidArgument, /^meta\[1\]\.name: "k" is listed twice$/);
      await expectConnectError(list([{ name: "", value: "1" }]), Code.InvalidArgument, /^meta\[0\]\.name must be 1 to 40 characters/);
    });

    it("keeps meta on a refund", async () => {
      const intent = await paidIntent(rest);
      const meta = [{ name: "ticket", value: "SUP-4411" }];
      const refund = await refunds.createRefund({ paymentIntentId: intent.id, amount: 100n, clientReference: uniqueReference("rpc-rf"), meta }, as());
      assert.deepEqual(plain(refund.meta), meta);
      assert.deepEqual(plain((await refunds.getRefund({ id: refund.id }, as())).meta), meta);
    });
  });
}
