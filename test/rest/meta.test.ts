import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock } from "../support/manual-clock.js";
import { paidIntent, refundRoutes, expectRefund } from "../support/refund-client.js";
import {
  createRestClient,
  expectError,
  expectJson,
  parseNextLink,
  type EventJson,
  type PaymentIntentJson,
  type PaymentIntentListJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, testStoreKind, type TestServer } from "../support/test-server.js";

type Entry = { name: string; value: string };
const entries = (n: number, prefix = "k"): Entry[] => Array.from({ length: n }, (_, i) => ({ name: `${prefix}_${i}`, value: `v${i}` }));
const ids = (list: PaymentIntentListJson) => list.paymentIntents.map((item) => item.id);

describe(`REST meta: the merchant's own data on intents and refunds, and the list filter (${testStoreKind} store)`, () => {
  let server: TestServer;
  let client: RestClient;
  let n = 0;
  const create = (meta: unknown, merchant?: string) =>
    client.createIntent({ amount: 50000, customerEmail: "ada@example.com", clientReference: `meta-${++n}`, meta }, merchant);
  const filter = (query: string, merchant?: string) => client.listIntents(query, merchant);

  before(async () => {
    server = await startTestServer({ clock: createManualClock("2026-11-26T08:00:00.000Z") });
    client = createRestClient(server);
  });
  after(() => server.close());

  describe("limits", () => {
    const longest = { name: "n".repeat(40), value: "é".repeat(500) };
    const accepted: [string, Entry[]][] = [
      ["50 entries, the most", entries(50)],
      ["a 40-character name and a 500-character value", [longest]],
      ["names of every allowed character", [{ name: "Az09._:-", value: "x" }]],
      ["a value with inner spaces, quotes and emoji", [{ name: "note", value: ` "hi" 😀 & = ? # [x] ` }]],
    ];
    for (const [label, meta] of accepted) {
      it(`accepts ${label}, and returns them as given`, async () => {
        const intent = expectJson<PaymentIntentJson>(await create(meta), 201);
        assert.deepEqual(intent.meta, meta);
      });
    }
    const refused: [string, unknown, RegExp][] = [
      ["51 entries", entries(51), /^meta may list at most 50 entries$/],
      ["a 41-character name", [{ name: "n".repeat(41), value: "x" }], /^meta\[0\]\.name must be 1 to 40 characters of A-Z, a-z, 0-9, '\.', '_', ':' or '-'$/],
      ["an empty name", [{ name: "", value: "x" }], /^meta\[0\]\.name must be 1 to 40 characters/],
      ["a name with a bracket", [{ name: "a[b]", value: "x" }], /^meta\[0\]\.name must be 1 to 40 characters/],
      ["a name with a space", [{ name: "order id", value: "x" }], /^meta\[0\]\.name must be 1 to 40 characters/],
      ["a 501-character value", [{ name: "k", value: "v".repeat(501) }], /^meta\[0\]\.value must be at most 500 characters of text$/],
      ["an empty value", [{ name: "k", value: "" }], /^meta\[0\]\.value must be at most 500 characters of text$/],
      ["a value of white space only", [{ name: "k", value: "   " }], /^meta\[0\]\.value must be at most 500 characters of text$/],
      ["a value with a control character", [{ name: "k", value: "a\nb" }], /^meta\[0\]\.value must be at most 500 characters of text$/],
      ["a value with NUL", [{ name: "k", value: "a\u0000b" }], /^meta\[0\]\.value must not contain NUL characters or unpaired surrogates$/],
      ["a name given twice", [{ name: "k", value: "1" }, { name: "j", value: "2" }, { name: "k", value: "3" }], /^meta\[2\]\.name: "k" is listed twice$/],
      ["an entry with another key", [{ name: "k", value: "1", extra: true }], /meta\[0\]/],
      ["an object instead of a list", { k: "v" }, /meta/],
      ["a number as value", [{ name: "k", value: 7 }], /meta\[0\]\.value/],
    ];
    for (const [label, meta, message] of refused) {
      it(`refuses ${label} with 400, creating nothing`, async () => {
        const reference = `meta-refused-${++n}`;
        expectError(await client.createIntent({ amount: 50000, customerEmail: "ada@example.com", clientReference: reference, meta }), 400, message);
        assert.deepEqual(expectJson<PaymentIntentListJson>(await filter(`clientReference=${reference}`), 200).paymentIntents, []);
      });
    }
  });

  describe("round trip", () => {
    it("shows meta on create, GET, the list, the created event and its webhook body", async () => {
      const meta = [{ name: "order_id", value: "A-1001" }, { name: "customer", value: "Ada Obi" }];
      const created = expectJson<PaymentIntentJson>(await create(meta), 201);
      assert.deepEqual(created.meta, meta);
      const read = expectJson<PaymentIntentJson>(await client.getIntent(created.id), 200);
      assert.deepEqual(read.meta, meta);
      const listed = expectJson<PaymentIntentListJson>(await filter(`clientReference=${created.clientReference}`), 200);
      assert.deepEqual(listed.paymentIntents[0]?.meta, meta);
      const events = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${created.id}`), 200).events;
      assert.equal(events[0]?.type, "payment_intent.created");
      assert.deepEqual((events[0]!.data as { meta: unknown }).meta, meta);
      // The webhook body is the stored event, as signed and sent.
      const stored = await server.recordedWebhooks!.events.findById("merchantA", events[0]!.id);
      assert.deepEqual((JSON.parse(stored!.body) as { data: { meta: unknown } }).data.meta, meta);
    });

    it("shows [] when none is given, as the contract's shape always did", async () => {
      const created = expectJson<PaymentIntentJson>(await client.createIntent({ amount: 100, customerEmail: "ada@example.com", clientReference: `meta-${++n}` }), 201);
      assert.deepEqual(created.meta, []);
      assert.deepEqual(expectJson<PaymentIntentJson>(await client.getIntent(created.id), 200).meta, []);
    });

    it("replays a retry with the same meta, and answers 409 for the same reference with other meta, or none", async () => {
      const body = { amount: 700, customerEmail: "ada@example.com", clientReference: `meta-${++n}`, meta: [{ name: "a", value: "1" }, { name: "b", value: "2" }] };
      const first = expectJson<PaymentIntentJson>(await client.createIntent(body), 201);
      const again = await client.createIntent(body);
      assert.deepEqual(expectJson(again, 200), first);
      assert.equal(again.headers.get("idempotent-replayed"), "true");
      for (const meta of [[{ name: "a", value: "1" }, { name: "b", value: "3" }], [{ name: "b", value: "2" }, { name: "a", value: "1" }], [], undefined]) {
        expectError(await client.createIntent({ ...body, meta }), 409, /is already used by payment intent .* with a different request/);
      }
    });

    it("keeps meta on a refund: create, replay, read, list and its refund.created event", async () => {
      const refunds = refundRoutes(client);
      const intent = await paidIntent(client);
      const meta = [{ name: "ticket", value: "SUP-4411" }];
      const body = { amount: 100, clientReference: `meta-rf-${++n}`, meta };
      const refund = expectRefund(await refunds.create(intent.id, body), 201);
      assert.deepEqual(refund.meta, meta);
      assert.deepEqual(expectRefund(await refunds.create(intent.id, body), 200), refund);
      expectError(await refunds.create(intent.id, { ...body, meta: [{ name: "ticket", value: "SUP-4412" }] }), 409, /different request/);
      assert.deepEqual(expectRefund(await refunds.get(refund.id), 200).meta, meta);
      const listed = expectJson<{ refunds: { id: string; meta: unknown }[] }>(await refunds.list(intent.id), 200).refunds;
      assert.deepEqual(listed.find((r) => r.id === refund.id)?.meta, meta);
      const events = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${intent.id}`), 200).events;
      const created = events.find((e) => e.type === "refund.created");
      assert.deepEqual((created as unknown as { refund: { meta: unknown } }).refund.meta, meta);
      expectError(await refunds.create(intent.id, { amount: 100, clientReference: `meta-rf-${++n}`, meta: [{ name: "t", value: "1" }, { name: "t", value: "2" }] }), 400, /^meta\[1\]\.name: "t" is listed twice$/);
      expectError(await refunds.create(intent.id, { amount: 100, clientReference: `meta-rf-${++n}`, meta: entries(51) }), 400, /^meta may list at most 50 entries$/);
    });
  });

  describe("list filter meta[name]=value", () => {
    let web1: PaymentIntentJson;
    let web2: PaymentIntentJson;
    let app: PaymentIntentJson;
    before(async () => {
      web1 = expectJson<PaymentIntentJson>(await create([{ name: "channel", value: "web" }, { name: "store", value: "ikeja" }]), 201);
      web2 = expectJson<PaymentIntentJson>(await create([{ name: "store", value: "lekki" }, { name: "channel", value: "web" }]), 201);
      app = expectJson<PaymentIntentJson>(await create([{ name: "channel", value: "app" }, { name: "store", value: "lekki" }]), 201);
      // merchantB has the same data: it never shows in merchantA's lists.
      expectJson(await create([{ name: "channel", value: "web" }, { name: "store", value: "lekki" }], "merchantB"), 201);
    });

    it("finds the intents with the entry, newest first, a write visible at once", async () => {
      assert.deepEqual(ids(expectJson(await filter("meta[channel]=web"), 200)), [web2.id, web1.id]);
      assert.deepEqual(ids(expectJson(await filter("meta[channel]=app"), 200)), [app.id]);
      const fresh = expectJson<PaymentIntentJson>(await create([{ name: "channel", value: "app" }]), 201);
      assert.deepEqual(ids(expectJson(await filter("meta[channel]=app"), 200)), [fresh.id, app.id]);
    });

    it("combines several filters with AND", async () => {
      assert.deepEqual(ids(expectJson(await filter("meta[channel]=web&meta[store]=lekki"), 200)), [web2.id]);
      assert.deepEqual(ids(expectJson(await filter("meta[store]=lekki&meta[channel]=web"), 200)), [web2.id]);
      assert.deepEqual(ids(expectJson(await filter("meta[store]=ikeja&meta[channel]=app"), 200)), []);
    });

    it("matches name and value exactly, URL-decoded, and answers an empty page for no match", async () => {
      assert.deepEqual(expectJson(await filter("meta[channel]=WEB"), 200), { paymentIntents: [] });
      assert.deepEqual(expectJson(await filter("meta[Channel]=web"), 200), { paymentIntents: [] });
      assert.deepEqual(expectJson(await filter("meta[channel]=we"), 200), { paymentIntents: [] });
      const spaced = expectJson<PaymentIntentJson>(await create([{ name: "note", value: "a b&c=d" }]), 201);
      assert.deepEqual(ids(expectJson(await filter(`meta%5Bnote%5D=${encodeURIComponent("a b&c=d")}`), 200)), [spaced.id]);
    });

    it("never matches another merchant's data", async () => {
      const other = expectJson<PaymentIntentListJson>(await filter("meta[channel]=web&meta[store]=lekki", "merchantB"), 200);
      assert.equal(other.paymentIntents.length, 1);
      assert.notEqual(other.paymentIntents[0]!.id, web2.id);
      assert.deepEqual(ids(expectJson(await filter("meta[channel]=web&meta[store]=lekki"), 200)), [web2.id]);
    });

    it("combines with status and clientReference, and leaves deleted intents out", async () => {
      assert.deepEqual(ids(expectJson(await filter(`meta[channel]=web&clientReference=${web1.clientReference}`), 200)), [web1.id]);
      assert.deepEqual(ids(expectJson(await filter(`meta[channel]=app&clientReference=${web1.clientReference}`), 200)), []);
      assert.deepEqual(ids(expectJson(await filter("meta[channel]=web&status=successful"), 200)), []);
      const gone = expectJson<PaymentIntentJson>(await create([{ name: "channel", value: "gone" }]), 201);
      expectJson(await client.deleteIntent(gone.id), 200);
      assert.deepEqual(ids(expectJson(await filter("meta[channel]=gone"), 200)), []);
    });

    it("pages through the matches with nextPageToken and Link, keeping the filter; the token serves only its filter", async () => {
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.unshift(expectJson<PaymentIntentJson>(await create([{ name: "batch", value: "p-1" }, { name: "i", value: String(i) }]), 201).id);
      expectJson(await create([{ name: "batch", value: "p-2" }]), 201);
      const first = await filter("meta[batch]=p-1&pageSize=2");
      const page1 = expectJson<PaymentIntentListJson>(first, 200);
      assert.deepEqual(ids(page1), made.slice(0, 2));
      const next = parseNextLink(first.headers.get("link"))!;
      assert.equal(new URL(next, "http://base.invalid").searchParams.get("meta[batch]"), "p-1");
      const page2 = expectJson<PaymentIntentListJson>(await client.request("GET", next.replace(/^\/v1/, "")), 200);
      assert.deepEqual(ids(page2), made.slice(2, 4));
      const page3 = expectJson<PaymentIntentListJson>(await filter(`meta[batch]=p-1&pageSize=2&pageToken=${page2.nextPageToken}`), 200);
      assert.deepEqual(page3, { paymentIntents: [page3.paymentIntents[0]] });
      assert.deepEqual(ids(page3), made.slice(4));
      expectError(await filter(`meta[batch]=p-2&pageSize=2&pageToken=${page1.nextPageToken}`), 400, /^pageToken is not valid for this query$/);
      expectError(await filter(`pageSize=2&pageToken=${page1.nextPageToken}`), 400, /^pageToken is not valid for this query$/);
    });

    const malformed: [string, string, RegExp][] = [
      ["a name given twice", "meta[a]=1&meta[a]=2", /^query parameter meta\[a\] is given more than once$/],
      ["11 filters", entries(11).map((e) => `meta[${e.name}]=${e.value}`).join("&"), /^meta may filter on at most 10 entries$/],
      ["an empty name", "meta[]=1", /^meta\[0\]\.name must be 1 to 40 characters/],
      ["a 41-character name", `meta[${"n".repeat(41)}]=1`, /^meta\[0\]\.name must be 1 to 40 characters/],
      ["a name with a space", "meta[a%20b]=1", /^meta\[0\]\.name must be 1 to 40 characters/],
      ["an empty value", "meta[a]=", /^meta\[0\]\.value must be at most 500 characters of text$/],
      ["a 501-character value", `meta[a]=${"v".repeat(501)}`, /^meta\[0\]\.value must be at most 500 characters of text$/],
      ["a NUL in the value", "meta[a]=%00", /^meta\[0\]\.value must not contain NUL characters or unpaired surrogates$/],
      ["meta without brackets", "meta=1", /^unknown query parameter meta$/],
      ["a nested bracket", "meta[a][b]=1", /^meta\[0\]\.name must be 1 to 40 characters/],
      ["another field in brackets", "status[a]=1", /^unknown query parameter status\[a\]$/],
      ["an unknown field in brackets", "metadata[a]=1", /^unknown query parameter metadata\[a\]$/],
    ];
    for (const [label, query, message] of malformed) {
      it(`answers 400 for ${label}`, async () => {
        expectError(await filter(query), 400, message);
      });
    }

    it("takes 10 filters, the most", async () => {
      const query = (list: Entry[]) => list.map((e) => `meta[${e.name}]=${e.value}`).join("&");
      const ten = expectJson<PaymentIntentJson>(await create([...entries(10, "ten"), { name: "extra", value: "x" }]), 201);
      assert.deepEqual(ids(expectJson(await filter(query(entries(10, "ten"))), 200)), [ten.id]);
      assert.deepEqual(expectJson(await filter(query([...entries(9, "ten"), { name: "ten_9", value: "other" }])), 200), { paymentIntents: [] });
    });
  });
});
