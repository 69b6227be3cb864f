import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import {
  assertOnlyKeys,
  createRestClient,
  expectError,
  expectJson,
  listItemOf,
  parseNextLink,
  paymentIntentListItemKeys,
  type PaymentIntentJson,
  type PaymentIntentListJson,
  type RestClient,
  type RestResponse,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const ids = (list: PaymentIntentListJson) => list.paymentIntents.map((item) => item.id);

/** listPage asserts the list body's keys and the agreement of nextPageToken and Link. */
function listPage(res: RestResponse): PaymentIntentListJson {
  const list = expectJson<PaymentIntentListJson>(res, 200);
  assertOnlyKeys(list, ["paymentIntents", "nextPageToken"], "list response");
  for (const item of list.paymentIntents) assertOnlyKeys(item, paymentIntentListItemKeys, "list item");
  const next = parseNextLink(res.headers.get("link"));
  if (list.nextPageToken === undefined) {
    assert.equal(res.headers.get("link"), null, "no Link header on the last page");
  } else {
    assert.match(list.nextPageToken, /^[A-Za-z0-9_.-]+$/);
    assert.ok(next, `Link rel="next" header, got ${res.headers.get("link")}`);
    const url = new URL(next, "http://base.invalid");
    assert.equal(url.pathname, "/v1/v2/payment-intents");
    assert.equal(url.searchParams.get("pageToken"), list.nextPageToken);
  }
  return list;
}

describe("REST list payment intents", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  /** merchantA's 55 intents, newest first. */
  let newestFirst: PaymentIntentJson[];

  before(async () => {
    clock = createManualClock("2025-05-01T00:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
    const created: PaymentIntentJson[] = [];
    for (let i = 0; i < 55; i++) {
      clock.advance(1000);
      created.push(
        expectJson<PaymentIntentJson>(
          await client.createIntent({ amount: 100 + i, customerEmail: "ada@example.com", clientReference: `order-${i}` }),
          201,
        ),
      );
    }
    newestFirst = created.reverse();
  });
  after(() => server.close());

  it("answers {\"paymentIntents\": []} and no Link for a merchant without intents", async () => {
    const res = await client.listIntents({}, "merchantB");
    assert.deepEqual(listPage(res), { paymentIntents: [] });
    assert.equal(res.headers.get("link"), null);
  });

  it("shows each item as §2.1 without settlementAccounts plus settlementAccount", async () => {
    const list = listPage(await client.listIntents({ pageSize: "2" }));
    assert.deepEqual(list.paymentIntents, [listItemOf(newestFirst[0]!, null), listItemOf(newestFirst[1]!, null)]);
  });

  it("pages by 50 by default, newest first, with nextPageToken and a Link to the next page", async () => {
    const res = await client.listIntents();
    const first = listPage(res);
    assert.deepEqual(ids(first), newestFirst.slice(0, 50).map((i) => i.id));
    assert.ok(first.nextPageToken);

    const next = parseNextLink(res.headers.get("link"))!;
    const second = listPage(await client.request("GET", `${server.url}${next}`));
    assert.deepEqual(ids(second), newestFirst.slice(50).map((i) => i.id));
    assert.equal("nextPageToken" in second, false);
  });

  it("orders items by createdAt descending", async () => {
    const list = listPage(await client.listIntents({ pageSize: "100" }));
    const times = list.paymentIntents.map((item) => item.createdAt);
    assert.deepEqual(times, [...times].sort().reverse());
    assert.equal(list.paymentIntents.length, 55);
  });

  for (const pageSize of [1, 7, 5, 54, 55, 100]) {
    it(`collects every intent exactly once with pageSize ${pageSize}, and stops without an empty page`, async () => {
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const query: Record<string, string> = { pageSize: String(pageSize) };
        if (token) query["pageToken"] = token;
        const page = listPage(await client.listIntents(query));
        pages += 1;
        assert.ok(page.paymentIntents.length > 0, "no empty page");
        assert.ok(page.paymentIntents.length <= pageSize);
        if (page.nextPageToken) assert.equal(page.paymentIntents.length, pageSize);
        seen.push(...ids(page));
        token = page.nextPageToken;
      } while (token !== undefined);
      assert.deepEqual(seen, newestFirst.map((i) => i.id));
      assert.equal(pages, Math.ceil(55 / pageSize));
    });
  }

  it("carries pageSize and the filters into the Link URL", async () => {
    const res = await client.listIntents({ pageSize: "3", status: "pending" });
    const page = listPage(res);
    const next = new URL(parseNextLink(res.headers.get("link"))!, "http://base.invalid");
    assert.deepEqual(
      [...next.searchParams.entries()].sort(),
      [
        ["pageSize", "3"],
        ["pageToken", page.nextPageToken!],
        ["status", "pending"],
      ],
    );
    const following = listPage(await client.request("GET", `${server.url}${next.pathname}${next.search}`));
    assert.deepEqual(ids(following), newestFirst.slice(3, 6).map((i) => i.id));
  });

  it("filters by clientReference", async () => {
    const list = listPage(await client.listIntents({ clientReference: "order-17" }));
    const created = newestFirst.find((i) => i.clientReference === "order-17")!;
    assert.deepEqual(list, { paymentIntents: [listItemOf(created, null)] });
    assert.deepEqual(listPage(await client.listIntents({ clientReference: "order-none" })), { paymentIntents: [] });
  });

  it("filters by status", async () => {
    const pending = listPage(await client.listIntents({ status: "pending", pageSize: "100" }));
    assert.deepEqual(ids(pending), newestFirst.map((i) => i.id));
    assert.deepEqual(listPage(await client.listIntents({ status: "successful" })), { paymentIntents: [] });
  });

  it("combines filters with paging", async () => {
    const page = listPage(await client.listIntents({ clientReference: "order-3", status: "pending", pageSize: "1" }));
    assert.deepEqual(ids(page), [newestFirst.find((i) => i.clientReference === "order-3")!.id]);
    assert.equal(page.nextPageToken, undefined);
  });

  const badQueries: { name: string; query: string; message: RegExp }[] = [
    { name: "pageSize 0", query: "pageSize=0", message: /^pageSize\b/ },
    { name: "pageSize 101", query: "pageSize=101", message: /^pageSize\b/ },
    { name: "pageSize -1", query: "pageSize=-1", message: /^pageSize\b/ },
    { name: "pageSize abc", query: "pageSize=abc", message: /^pageSize\b/ },
    { name: "pageSize 1.5", query: "pageSize=1.5", message: /^pageSize\b/ },
    { name: "pageSize 1e1", query: "pageSize=1e1", message: /^pageSize\b/ },
    { name: "pageSize empty", query: "pageSize=", message: /^pageSize\b/ },
    { name: "pageSize huge", query: "pageSize=99999999999", message: /^pageSize\b/ },
    { name: "pageSize twice", query: "pageSize=5&pageSize=6", message: /\bpageSize\b/ },
    { name: "status bogus", query: "status=bogus", message: /^status\b/ },
    { name: "status in upper case", query: "status=PENDING", message: /^status\b/ },
    { name: "clientReference with forbidden characters", query: "clientReference=a%20b", message: /^clientReference\b/ },
    { name: "an unknown parameter", query: "limit=5", message: /unknown query parameter limit\b/ },
    { name: "a proto field name", query: "page_size=5", message: /unknown query parameter page_size\b/ },
    { name: "a tampered pageToken", query: "pageToken=eyJ4IjoxfQ.AAAAAAAAAAAAAAAAAAAAAA", message: /^pageToken\b/ },
    { name: "a garbage pageToken", query: "pageToken=abc", message: /^pageToken\b/ },
  ];
  for (const { name, query, message } of badQueries) {
    it(`answers 400 for ${name}`, async () => {
      expectError(await client.listIntents(query), 400, message);
    });
  }

  it("refuses a real token with one character changed", async () => {
    const token = listPage(await client.listIntents({ pageSize: "2" })).nextPageToken!;
    const [payload, mac] = token.split(".") as [string, string];
    const flip = (text: string, at: number) =>
      `${text.slice(0, at)}${text[at] === "A" ? "B" : "A"}${text.slice(at + 1)}`;
    for (const forged of [`${payload}.${flip(mac, 0)}`, `${flip(payload, 0)}.${mac}`, `${token}x`, token.slice(0, -1)]) {
      expectError(await client.listIntents({ pageSize: "2", pageToken: forged }), 400, /^pageToken\b/);
    }
  });

  it("refuses a token issued for other filters", async () => {
    const token = listPage(await client.listIntents({ pageSize: "2", status: "pending" })).nextPageToken!;
    expectError(await client.listIntents({ pageSize: "2", pageToken: token }), 400, /^pageToken\b/);
  });

  it("accepts a token with another pageSize", async () => {
    const token = listPage(await client.listIntents({ pageSize: "2" })).nextPageToken!;
    const page = listPage(await client.listIntents({ pageSize: "3", pageToken: token }));
    assert.deepEqual(ids(page), newestFirst.slice(2, 5).map((i) => i.id));
  });
});

describe("REST list payment intents: order and stable paging", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2025-06-01T12:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
  });
  after(() => server.close());

  const create = async (clientReference: string) =>
    expectJson<PaymentIntentJson>(
      await client.createIntent({ amount: 100, customerEmail: "ada@example.com", clientReference }),
      201,
    );

  it("breaks createdAt ties by id descending, and sorts by createdAt before id", async () => {
    clock.set("2025-06-01T12:00:01.000Z");
    const a = await create("tie-a");
    clock.set("2025-06-01T12:00:02.000Z");
    const b = await create("tie-b");
    const c = await create("tie-c"); // same millisecond as b, later id
    // The clock steps back: d gets the highest id but the earliest createdAt.
    clock.set("2025-06-01T12:00:00.500Z");
    const d = await create("tie-d");
    assert.equal(b.createdAt, c.createdAt);
    assert.ok(c.id > b.id && d.id > c.id, "ids increase in creation order");

    const list = listPage(await client.listIntents());
    assert.deepEqual(ids(list), [c.id, b.id, a.id, d.id]);

    // Paging one by one through the tie gives the same order.
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = listPage(await client.listIntents(token ? { pageSize: "1", pageToken: token } : { pageSize: "1" }));
      seen.push(...ids(page));
      token = page.nextPageToken;
    } while (token);
    assert.deepEqual(seen, [c.id, b.id, a.id, d.id]);
  });

  it("keeps paging stable when intents are created or deleted between pages", async () => {
    const firstPage = listPage(await client.listIntents({ pageSize: "2" }));
    const [first, second] = firstPage.paymentIntents;
    const rest = ids(listPage(await client.listIntents({ pageSize: "100" }))).slice(2);

    clock.set("2025-06-01T13:00:00.000Z");
    await create("between-pages");
    // The cursor's own intent disappears: the next page still starts right after it.
    expectJson(await client.deleteIntent(second!.id), 200);

    const nextPage = listPage(await client.listIntents({ pageSize: "100", pageToken: firstPage.nextPageToken! }));
    assert.deepEqual(ids(nextPage), rest);
    assert.ok(!ids(nextPage).includes(first!.id));
  });
});

describe("REST list payment intents: deleted intents", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
  });
  after(() => server.close());

  it("never shows a deleted intent: not in the list, not by reference, not by status", async () => {
    const created: PaymentIntentJson[] = [];
    for (const reference of ["keep-1", "gone-1", "keep-2", "gone-2"]) {
      created.push(
        expectJson<PaymentIntentJson>(
          await client.createIntent({ amount: 100, customerEmail: "ada@example.com", clientReference: reference }),
          201,
        ),
      );
    }
    for (const intent of created.filter((i) => i.clientReference.startsWith("gone"))) {
      expectJson(await client.deleteIntent(intent.id), 200);
    }
    const kept = created.filter((i) => i.clientReference.startsWith("keep")).reverse();

    assert.deepEqual(listPage(await client.listIntents()), { paymentIntents: kept.map((i) => listItemOf(i, null)) });
    assert.deepEqual(listPage(await client.listIntents({ clientReference: "gone-1" })), { paymentIntents: [] });
    assert.deepEqual(listPage(await client.listIntents({ status: "cancelled" })), { paymentIntents: [] });
    // Paging counts only live intents: one page of 2 holds everything.
    assert.equal(listPage(await client.listIntents({ pageSize: "2" })).nextPageToken, undefined);
  });
});
