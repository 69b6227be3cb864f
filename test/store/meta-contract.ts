import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { MetaEntry } from "../../src/domain/meta.js";
import { unstorableTextMessage } from "../../src/store/storable-text.js";
import { at, contractMerchants, intentId, intentRecord, type ContractContext } from "./contract-records.js";

const { a: merchantA, b: merchantB } = contractMerchants;

const entry = (name: string, value: string): MetaEntry => ({ name, value });

/**
 * metaContract: an intent's meta (the merchant's own data) is stored as
 * given, in its order, and the list filters on it (every entry must match,
 * name and value exactly), scoped to the merchant, in the list's order,
 * with keyset paging, the other filters, and a write visible at once, in
 * every store alike.
 */
export function metaContract(c: ContractContext): void {
  describe("meta", () => {
    it("round-trips entries in their order, the longest names and values and non-ASCII text included", async () => {
      const meta = [entry("z", "last first"), entry("a".repeat(40), "é😀".repeat(250)), entry("order_id", "A-1001")];
      const record = await c.insertIntent({ id: intentId(1), meta });
      assert.deepEqual((await c.intents.findById(merchantA, record.id))?.meta, meta);
      assert.deepEqual((await c.listIntents({ merchantId: merchantA, limit: 10 }))[0]?.meta, meta);
      assert.deepEqual((await c.intents.findWithAccount(merchantA, record.id))?.intent.meta, meta);
    });

    it("refuses a value that cannot be stored, writing nothing", async () => {
      await assert.rejects(c.intents.insert(intentRecord({ id: intentId(1), meta: [entry("note", "a\u0000b")] })), (error: unknown) => {
        assert.ok(error instanceof ConnectError && error.code === Code.InvalidArgument && error.rawMessage === unstorableTextMessage, String(error));
        return true;
      });
      assert.equal(await c.intents.findById(merchantA, intentId(1)), undefined);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, meta: [entry("note", "a\u0000b")] }), []);
    });

    it("filters on one entry: name and value exactly, at once after the write", async () => {
      await c.insertIntent({ id: intentId(1), clientReference: "o-1", meta: [entry("order_id", "A-1001")] });
      const wanted = await c.insertIntent({ id: intentId(2), clientReference: "o-2", createdAt: at(1), meta: [entry("order_id", "A-1002"), entry("channel", "web")] });
      await c.insertIntent({ id: intentId(3), clientReference: "o-3", createdAt: at(2), meta: [entry("order_id", "A-10020")] });
      await c.insertIntent({ id: intentId(4), clientReference: "o-4", createdAt: at(3), meta: [entry("ORDER_ID", "A-1002"), entry("other", "order_id")] });

      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, meta: [entry("order_id", "A-1002")] }), [wanted]);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, meta: [entry("order_id", "a-1002")] }), []);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, meta: [entry("order_id", "A-100")] }), []);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, meta: [entry("A-1002", "order_id")] }), []);
    });

    it("combines filters with AND, in any order of entries", async () => {
      await c.insertIntent({ id: intentId(1), clientReference: "o-1", meta: [entry("channel", "web"), entry("store", "ikeja")] });
      const both = await c.insertIntent({ id: intentId(2), clientReference: "o-2", createdAt: at(1), meta: [entry("store", "lekki"), entry("channel", "web")] });
      await c.insertIntent({ id: intentId(3), clientReference: "o-3", createdAt: at(2), meta: [entry("channel", "app"), entry("store", "lekki")] });

      const page = (meta: MetaEntry[]) => c.listIntents({ merchantId: merchantA, limit: 10, meta });
      assert.deepEqual((await page([entry("channel", "web")])).map((r) => r.id), [intentId(2), intentId(1)]);
      assert.deepEqual(await page([entry("channel", "web"), entry("store", "lekki")]), [both]);
      assert.deepEqual(await page([entry("store", "lekki"), entry("channel", "web")]), [both]);
      assert.deepEqual(await page([entry("channel", "web"), entry("store", "lekki"), entry("missing", "x")]), []);
    });

    it("never matches another merchant's data", async () => {
      await c.insertIntent({ id: intentId(1), merchantId: merchantB, clientReference: "o-1", meta: [entry("order_id", "A-1001")] });
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, meta: [entry("order_id", "A-1001")] }), []);
      const own = await c.insertIntent({ id: intentId(2), clientReference: "o-1", meta: [entry("order_id", "A-1001")] });
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, meta: [entry("order_id", "A-1001")] }), [own]);
      assert.deepEqual((await c.listIntents({ merchantId: merchantB, limit: 10, meta: [entry("order_id", "A-1001")] })).map((r) => r.id), [intentId(1)]);
    });

    it("pages newest first within the filter through every match exactly once, ties on createdAt included", async () => {
      const matching: string[] = [];
      for (let i = 1; i <= 9; i++) {
        const meta = i % 3 === 0 ? [entry("batch", "other")] : [entry("batch", "b-7"), entry("n", String(i))];
        // Pairs share a createdAt, so the id breaks the tie as in the unfiltered list.
        await c.insertIntent({ id: intentId(i), clientReference: `o-${i}`, createdAt: at(Math.floor(i / 2)), meta });
        if (i % 3 !== 0) matching.unshift(intentId(i));
      }
      const seen: string[] = [];
      let after;
      for (;;) {
        const page = await c.listIntents({ merchantId: merchantA, limit: 2, meta: [entry("batch", "b-7")], ...(after && { after }) });
        seen.push(...page.map((r) => r.id));
        if (page.length < 2) break;
        const last = page[page.length - 1]!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      assert.deepEqual(seen, matching);
    });

    it("leaves out cancelled intents, and combines with the status and clientReference filters", async () => {
      await c.insertIntent({ id: intentId(1), clientReference: "o-1", meta: [entry("k", "v")] });
      const paid = await c.insertIntent({ id: intentId(2), clientReference: "o-2", createdAt: at(1), status: "successful", meta: [entry("k", "v")] });
      await c.insertIntent({ id: intentId(3), clientReference: "o-3", createdAt: at(2), meta: [entry("k", "v")] });
      await c.intents.cancel(merchantA, intentId(3), at(5));

      const page = (extra: object) => c.listIntents({ merchantId: merchantA, limit: 10, meta: [entry("k", "v")], ...extra });
      assert.deepEqual((await page({})).map((r) => r.id), [intentId(2), intentId(1)]);
      assert.deepEqual(await page({ status: "successful" }), [paid]);
      assert.deepEqual((await page({ clientReference: "o-1" })).map((r) => r.id), [intentId(1)]);
      assert.deepEqual(await page({ clientReference: "o-3" }), []);
    });
  });
}
