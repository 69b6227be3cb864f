import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import pg from "pg";
import type { EventType } from "../../src/domain/event.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { adminUrl, createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";

const skip = await postgresUnavailable();

const merchantId = "mer_stream";
const t0 = Date.parse("2026-06-01T10:00:00.000Z");

describe("PostgresEventStore", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  let n = 0;

  const insertText = `insert into events (merchant_id, id, type, payment_intent_id, created_at, payload, body) values ($1, $2, $3, $4, $5, $6, $7)`;
  /** An event written by SQL on the given client (or a connection of its own), created n seconds after t0. */
  async function insertEvent(client?: pg.Client, options: { type?: EventType; merchant?: string; intent?: string } = {}) {
    n += 1;
    const id = `evt_${String(n).padStart(4, "0")}`;
    const values = [
      options.merchant ?? merchantId,
      id,
      options.type ?? "payment_intent.created",
      options.intent ?? "pi_1",
      new Date(t0 + n * 1000),
      Buffer.from([n, 0, 255]),
      `{"id":"${id}"}`,
    ];
    if (client) await client.query(insertText, values);
    else await queryDatabase(db.url, insertText, values);
    return id;
  }
  /**
   * readAfter until it returns at least count events (or 10 s pass): a
   * transaction of another test on the same server holds the horizon back
   * for as long as it runs, so "visible now" is "visible soon" here.
   */
  async function readEventually(cursor: string, limit: number, count: number, types?: EventType[]) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const read = await stores.events.readAfter(merchantId, cursor, limit, types);
      if (read.events.length >= count || Date.now() > deadline) return read;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  async function connect() {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    return client;
  }

  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url, { poolMax: 4 });
    await stores.apiKeys.ensureMerchant(merchantId, "Stream");
    await stores.apiKeys.ensureMerchant("mer_other", "Other");
  });
  after(async () => {
    await stores?.close();
    await db?.drop();
  });
  beforeEach(() => queryDatabase(db.url, "truncate events cascade"));

  it("lists newest first with keyset paging and filters, scoped to the merchant", async () => {
    const a = await insertEvent(undefined, { intent: "pi_a" });
    const b = await insertEvent(undefined, { intent: "pi_b", type: "payment_intent.succeeded" });
    const c = await insertEvent(undefined, { intent: "pi_a", type: "payment_intent.succeeded" });
    await insertEvent(undefined, { merchant: "mer_other" });
    const ids = async (query: Partial<Parameters<PostgresStores["events"]["list"]>[0]>) =>
      (await stores.events.list({ livemode: false, merchantId, limit: 10, ...query })).map((e) => e.id);
    assert.deepEqual(await ids({}), [c, b, a]);
    const [first] = await stores.events.list({ livemode: false, merchantId, limit: 1 });
    assert.deepEqual(await ids({ after: { createdAt: first!.createdAt, id: first!.id } }), [b, a]);
    assert.deepEqual(await ids({ type: "payment_intent.succeeded" }), [c, b]);
    assert.deepEqual(await ids({ paymentIntentId: "pi_a" }), [c, a]);
    assert.deepEqual(await ids({ paymentIntentId: "pi_a", type: "payment_intent.created" }), [a]);
    assert.deepEqual(await ids({ paymentIntentId: "pi\u0000a" }), []);
    const found = await stores.events.findById(merchantId, a);
    assert.deepEqual(found, {
      id: a,
      merchantId,
      type: "payment_intent.created",
      paymentIntentId: "pi_a",
      createdAt: new Date(t0 + (n - 3) * 1000),
      payload: new Uint8Array([n - 3, 0, 255]),
      body: `{"id":"${a}"}`,
      livemode: false,
    });
    assert.equal(await stores.events.findById("mer_other", a), undefined);
  });

  it("streams in commit order from a cursor, moving past other types, and resumes after an event", async () => {
    const head = await stores.events.headCursor(merchantId);
    const a = await insertEvent();
    const b = await insertEvent(undefined, { type: "payment_intent.succeeded" });
    const c = await insertEvent();
    await insertEvent(undefined, { merchant: "mer_other" });
    const all = await readEventually(head, 2, 2);
    assert.deepEqual(all.events.map((e) => e.id), [a, b]);
    const rest = await readEventually(all.cursor, 10, 1);
    assert.deepEqual(rest.events.map((e) => e.id), [c]);
    assert.deepEqual(await stores.events.readAfter(merchantId, rest.cursor, 10), { events: [], cursor: rest.cursor });
    assert.equal(await stores.events.headCursor(merchantId), rest.cursor);

    const created = await readEventually(head, 10, 2, ["payment_intent.created"]);
    assert.deepEqual(created.events.map((e) => e.id), [a, c]);
    const succeeded = await readEventually(head, 10, 1, ["payment_intent.succeeded"]);
    assert.deepEqual(succeeded.events.map((e) => e.id), [b]);
    assert.equal(succeeded.cursor, rest.cursor, "the cursor moves past the other types read");

    const afterA = await stores.events.cursorAfter(merchantId, a);
    assert.ok(afterA);
    assert.deepEqual((await readEventually(afterA, 10, 2)).events.map((e) => e.id), [b, c]);
    assert.equal(await stores.events.cursorAfter("mer_other", a), undefined);
    await assert.rejects(stores.events.readAfter(merchantId, "not-a-cursor", 10), (error: unknown) => {
      assert.ok(error instanceof ConnectError && error.code === Code.InvalidArgument);
      return true;
    });
  });

  it("holds back events of later transactions while an earlier one may still commit: no gap, no duplicate", async () => {
    const start = await stores.events.headCursor(merchantId);
    const early = await connect();
    const late = await connect();
    try {
      // A takes its transaction id first, B after it; B commits first.
      await early.query("begin");
      const a = await insertEvent(early);
      await late.query("begin");
      const b = await insertEvent(late);
      await late.query("commit");

      const whileOpen = await stores.events.readAfter(merchantId, start, 10);
      assert.deepEqual(whileOpen, { events: [], cursor: start }, "B is held back while A runs");
      assert.equal(await stores.events.headCursor(merchantId), start);

      await early.query("commit");
      const read = await readEventually(whileOpen.cursor, 10, 2);
      assert.deepEqual(read.events.map((e) => e.id), [a, b], "A before B: the order of the transactions");
      assert.deepEqual((await stores.events.readAfter(merchantId, read.cursor, 10)).events, []);
    } finally {
      await early.end();
      await late.end();
    }
  });

  it("streams an event of an earlier transaction that commits after a later one was read: nothing skipped", async () => {
    const start = await stores.events.headCursor(merchantId);
    const early = await connect();
    try {
      await early.query("begin");
      const a = await insertEvent(early);
      // Events of other merchants' transactions are held back too, then read in order.
      const seen: string[] = [];
      let cursor = start;
      const b = await insertEvent();
      const c = await insertEvent();
      const first = await stores.events.readAfter(merchantId, cursor, 10);
      seen.push(...first.events.map((e) => e.id));
      cursor = first.cursor;
      await early.query("commit");
      const d = await insertEvent();
      for (let i = 0; i < 3; i++) {
        const next = await readEventually(cursor, 1, 1);
        seen.push(...next.events.map((e) => e.id));
        cursor = next.cursor;
      }
      assert.deepEqual(seen, [a, b, c]);
      const last = await readEventually(cursor, 10, 1);
      assert.deepEqual([...seen, ...last.events.map((e) => e.id)], [a, b, c, d]);
    } finally {
      await early.end();
    }
  });

  it("keeps a rolled-back transaction's events out, and moves on past them", async () => {
    const start = await stores.events.headCursor(merchantId);
    const client = await connect();
    try {
      await client.query("begin");
      await insertEvent(client);
      const b = await insertEvent();
      assert.deepEqual((await stores.events.readAfter(merchantId, start, 10)).events, []);
      await client.query("rollback");
      assert.deepEqual((await readEventually(start, 10, 1)).events.map((e) => e.id), [b]);
    } finally {
      await client.end();
    }
  });
  it("is not held back by a transaction of another database", async () => {
    const start = await stores.events.headCursor(merchantId);
    const elsewhere = new pg.Client({ connectionString: adminUrl });
    await elsewhere.connect();
    try {
      await elsewhere.query("begin");
      await elsewhere.query("select pg_current_xact_id()");
      const a = await insertEvent();
      assert.deepEqual((await stores.events.readAfter(merchantId, start, 10)).events.map((e) => e.id), [a]);
      assert.notEqual(await stores.events.headCursor(merchantId), start);
    } finally {
      await elsewhere.query("rollback").catch(() => {});
      await elsewhere.end();
    }
  });
});
