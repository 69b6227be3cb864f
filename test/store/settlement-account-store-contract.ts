import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SettlementAccountRecord } from "../../src/domain/settlement-account.js";
import {
  accountId,
  accountNumber,
  accountRecord,
  at,
  contractMerchants,
  mutateAccount,
  newestFirst,
  unlimited,
  type ContractContext,
} from "./contract-records.js";

const { a: merchantA, b: merchantB } = contractMerchants;

/**
 * settlementAccountStoreContract: what every SettlementAccountStore does,
 * run by paymentIntentStoreContract on each implementation.
 */
export function settlementAccountStoreContract(c: ContractContext): void {
  describe("SettlementAccountStore", () => {
    it("inserts an account and reads it back with every field", async () => {
      const record = accountRecord({
        id: accountId(1),
        accountName: "Ada Lovelace Ventures",
        accountNumber: "0123456789",
        bankName: "Zenith Bank",
        bankCode: "057",
        createdAt: new Date("2024-05-01T10:00:00.123Z"),
        updatedAt: new Date("2024-05-01T10:00:00.999Z"),
      });

      assert.deepEqual(await c.accounts.insert(record, unlimited), { inserted: true, record });
      assert.deepEqual(await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 }), [record]);
      assert.deepEqual(await c.accounts.findByIds(merchantA, [record.id]), [record]);
    });

    it("refuses the same (bankCode, accountNumber) twice for a merchant and returns the stored one", async () => {
      const stored = await c.insertAccount({ id: accountId(1), bankCode: "057", accountNumber: "0123456789", accountName: "First" });

      const result = await c.accounts.insert(
        accountRecord({ id: accountId(2), bankCode: "057", accountNumber: "0123456789", accountName: "Second" }),
        unlimited,
      );

      assert.deepEqual(result, { inserted: false, existing: stored });
      assert.deepEqual(await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 }), [stored]);
    });

    it("accepts the same account number at another bank", async () => {
      await c.insertAccount({ id: accountId(1), bankCode: "057", accountNumber: "0123456789" });
      await c.insertAccount({ id: accountId(2), bankCode: "058", accountNumber: "0123456789" });
      assert.equal((await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 })).length, 2);
    });

    it("accepts the same account for another merchant", async () => {
      const ofA = await c.insertAccount({ id: accountId(1), merchantId: merchantA });
      const ofB = accountRecord({ id: accountId(2), merchantId: merchantB });

      assert.deepEqual(await c.accounts.insert(ofB, unlimited), { inserted: true, record: ofB });
      assert.deepEqual(await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 }), [ofA]);
      assert.deepEqual(await c.accounts.listByMerchant({ livemode: false, merchantId: merchantB, limit: 100 }), [ofB]);
    });

    it("writes exactly one of 20 concurrent inserts of one account", async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => c.accounts.insert(accountRecord({ id: accountId(100 + i) }), unlimited)),
      );
      assert.equal(results.filter((r) => r.inserted).length, 1);
      assert.equal((await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 })).length, 1);
    });

    it("listByMerchant orders newest first, then id desc, and shows only the merchant's accounts", async () => {
      const rows = [
        { id: accountId(4), createdAt: at(10) },
        { id: accountId(1), createdAt: at(30) },
        { id: accountId(2), createdAt: at(20) },
        { id: accountId(6), createdAt: at(20) },
      ];
      for (const [i, row] of rows.entries()) {
        await c.insertAccount({ ...row, updatedAt: row.createdAt, accountNumber: accountNumber(i) });
      }
      await c.insertAccount({ id: accountId(9), merchantId: merchantB, createdAt: at(99), accountNumber: accountNumber(9) });

      assert.deepEqual(
        (await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 })).map((r) => r.id),
        [accountId(1), accountId(6), accountId(2), accountId(4)],
      );
      assert.deepEqual(await c.accounts.listByMerchant({ livemode: false, merchantId: "merchant-without-rows", limit: 100 }), []);
    });

    it("findByIds returns the merchant's accounts among the ids, each once, leaving out unknown and foreign ids", async () => {
      const one = await c.insertAccount({ id: accountId(1), accountNumber: accountNumber(1) });
      const two = await c.insertAccount({ id: accountId(2), accountNumber: accountNumber(2) });
      await c.insertAccount({ id: accountId(3), accountNumber: accountNumber(3) });
      await c.insertAccount({ id: accountId(4), merchantId: merchantB, accountNumber: accountNumber(4) });

      const found = await c.accounts.findByIds(merchantA, [accountId(2), accountId(4), accountId(99), accountId(1), accountId(2)]);

      assert.deepEqual([...found].sort((x, y) => (x.id < y.id ? -1 : 1)), [one, two]);
      assert.deepEqual(await c.accounts.findByIds(merchantB, [accountId(1), accountId(2)]), []);
      assert.deepEqual(await c.accounts.findByIds(merchantA, []), []);
    });

    it("findEarliest returns the merchant's first registered account, the lowest id on a tie", async () => {
      assert.equal(await c.accounts.findEarliest(merchantA, false), undefined);
      await c.insertAccount({ id: accountId(1), createdAt: at(30), accountNumber: accountNumber(1) });
      await c.insertAccount({ id: accountId(5), createdAt: at(10), accountNumber: accountNumber(5) });
      await c.insertAccount({ id: accountId(3), createdAt: at(10), accountNumber: accountNumber(3) });
      await c.insertAccount({ id: accountId(2), merchantId: merchantB, createdAt: at(1), accountNumber: accountNumber(2) });

      assert.equal((await c.accounts.findEarliest(merchantA, false))?.id, accountId(3));
      assert.equal((await c.accounts.findEarliest(merchantB, false))?.id, accountId(2));
      assert.equal(await c.accounts.findEarliest("merchant-without-rows", false), undefined);
    });

    it("keeps what was stored when inserted or returned accounts are mutated", async () => {
      const record = accountRecord({ id: accountId(1) });
      const expected = structuredClone(record);
      const result = await c.accounts.insert(record, unlimited);
      assert.ok(result.inserted);
      mutateAccount(record);
      mutateAccount(result.record);
      for (const row of await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 })) mutateAccount(row);
      for (const row of await c.accounts.findByIds(merchantA, [expected.id])) mutateAccount(row);
      mutateAccount((await c.accounts.findEarliest(merchantA, false))!);
      const refused = await c.accounts.insert(accountRecord({ id: accountId(2) }), unlimited);
      assert.ok(!refused.inserted && "existing" in refused);
      mutateAccount(refused.existing);

      assert.deepEqual(await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 }), [expected]);
    });

    it("listByMerchant pages newest first after a cursor, through every account exactly once, ties included", async () => {
      const inserted: SettlementAccountRecord[] = [];
      for (let i = 1; i <= 7; i++) {
        // Pairs share a createdAt, so page boundaries fall inside ties.
        inserted.push(await c.insertAccount({ id: accountId(i), createdAt: at(Math.floor(i / 2)), accountNumber: accountNumber(i) }));
      }
      await c.insertAccount({ id: accountId(50), merchantId: merchantB, createdAt: at(2), accountNumber: accountNumber(50) });
      const expected = [...inserted].sort(newestFirst).map((r) => r.id);
      for (const limit of [1, 2, 3, 7, 8]) {
        const seen: string[] = [];
        let after: { createdAt: Date; id: string } | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const page = await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit, after });
          assert.ok(page.length <= limit);
          seen.push(...page.map((r) => r.id));
          const last = page[page.length - 1];
          if (page.length < limit || !last) break;
          after = { createdAt: last.createdAt, id: last.id };
        }
        assert.deepEqual(seen, expected, `limit ${limit}`);
      }
    });

    it("refuses an account past maxPerMerchant, and still answers a registered one as existing", async () => {
      const first = await c.insertAccount({ id: accountId(1), accountNumber: accountNumber(1) });
      await c.insertAccount({ id: accountId(2), accountNumber: accountNumber(2) });
      const limits = { maxPerMerchant: 2 };

      assert.deepEqual(await c.accounts.insert(accountRecord({ id: accountId(3), accountNumber: accountNumber(3) }), limits), {
        inserted: false,
        full: true,
      });
      assert.deepEqual(await c.accounts.insert(accountRecord({ id: accountId(4), accountNumber: accountNumber(1) }), limits), {
        inserted: false,
        existing: first,
      });
      // The limit is per merchant.
      const ofB = accountRecord({ id: accountId(5), merchantId: merchantB, accountNumber: accountNumber(3) });
      assert.deepEqual(await c.accounts.insert(ofB, limits), { inserted: true, record: ofB });
      assert.equal((await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 10 })).length, 2);
    });

    it("lets no burst of concurrent inserts pass maxPerMerchant", async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          c.accounts.insert(accountRecord({ id: accountId(100 + i), accountNumber: accountNumber(100 + i) }), { maxPerMerchant: 5 }),
        ),
      );
      assert.equal(results.filter((r) => r.inserted).length, 5);
      assert.equal(results.filter((r) => !r.inserted && "full" in r).length, 7);
      assert.equal((await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 100 })).length, 5);
    });
  });
}
