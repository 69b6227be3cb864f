import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { accountId, accountNumber, at, contractMerchants, intentId, type ContractContext } from "./contract-records.js";

const { a: merchantA, b: merchantB } = contractMerchants;

/**
 * listWithAccountsContract: what list and findWithAccount return beside the
 * record (the account a list item shows, §2.4), and how a list's status
 * filter treats pending intents past their deadline.
 */
export function listWithAccountsContract(c: ContractContext): void {
  describe("list items with their settlement account", () => {
    /** Three accounts of merchantA: the earliest is accountId(2) (createdAt ties broken by the lower id). */
    async function threeAccounts() {
      const later = await c.insertAccount({ id: accountId(1), createdAt: at(5), accountNumber: accountNumber(1) });
      const earliest = await c.insertAccount({ id: accountId(2), createdAt: at(1), accountNumber: accountNumber(2) });
      const tied = await c.insertAccount({ id: accountId(3), createdAt: at(1), accountNumber: accountNumber(3) });
      return { later, earliest, tied };
    }

    it("shows the first split's account, else the merchant's earliest account, else null", async () => {
      const { later, earliest, tied } = await threeAccounts();
      const split = await c.insertIntent({
        id: intentId(1),
        clientReference: "split",
        createdAt: at(10),
        splits: [
          { settlementAccountId: later.id, splitAmount: 100n },
          { settlementAccountId: earliest.id, splitAmount: 200n },
        ],
      });
      const plain = await c.insertIntent({ id: intentId(2), clientReference: "plain", createdAt: at(11) });
      const toTied = await c.insertIntent({
        id: intentId(3),
        clientReference: "tied",
        createdAt: at(12),
        splits: [{ settlementAccountId: tied.id, splitAmount: 1n }],
      });
      const ofB = await c.insertIntent({ id: intentId(4), merchantId: merchantB, clientReference: "b" });

      assert.deepEqual(await c.intents.list({ livemode: false, merchantId: merchantA, limit: 10, now: at(0) }), [
        { intent: toTied, account: tied },
        { intent: plain, account: earliest },
        { intent: split, account: later },
      ]);
      assert.deepEqual(await c.intents.list({ livemode: false, merchantId: merchantB, limit: 10, now: at(0) }), [{ intent: ofB, account: null }]);
    });

    it("findWithAccount reads one intent with its account, deleted ones included, and nothing of another merchant", async () => {
      const { earliest } = await threeAccounts();
      const plain = await c.insertIntent({ id: intentId(1), clientReference: "plain" });
      assert.deepEqual(await c.intents.findWithAccount(merchantA, plain.id), { intent: plain, account: earliest });

      const cancelled = await c.intents.cancel(merchantA, plain.id, at(30));
      assert.deepEqual(await c.intents.findWithAccount(merchantA, plain.id), { intent: cancelled, account: earliest });
      assert.equal(await c.intents.findWithAccount(merchantB, plain.id), undefined);
      assert.equal(await c.intents.findWithAccount(merchantA, intentId(99)), undefined);

      const ofB = await c.insertIntent({ id: intentId(2), merchantId: merchantB, clientReference: "b" });
      assert.deepEqual(await c.intents.findWithAccount(merchantB, ofB.id), { intent: ofB, account: null });
    });

    it("returns copies: changing an item's account changes nothing stored", async () => {
      const { earliest } = await threeAccounts();
      await c.insertIntent({ id: intentId(1) });
      const [item] = await c.intents.list({ livemode: false, merchantId: merchantA, limit: 1, now: at(0) });
      item!.account!.accountName = "mutated";
      item!.account!.createdAt.setTime(0);
      assert.deepEqual((await c.intents.findWithAccount(merchantA, intentId(1)))?.account, earliest);
    });
  });

  describe("list status filter and lapsed pending intents", () => {
    /** Intents of merchantA at now = at(50): one lapsed, one still pending, one expired, one paid, one lapsed but cancelled. */
    async function lifecycle() {
      const lapsed = await c.insertIntent({ id: intentId(1), clientReference: "lapsed", createdAt: at(1), expiresAt: at(10) });
      const pending = await c.insertIntent({ id: intentId(2), clientReference: "pending", createdAt: at(2), expiresAt: at(100) });
      const expired = await c.insertIntent({ id: intentId(3), clientReference: "expired", createdAt: at(3), status: "expired" });
      const paid = await c.insertIntent({ id: intentId(4), clientReference: "paid", createdAt: at(4), status: "successful" });
      await c.insertIntent({ id: intentId(5), clientReference: "gone", createdAt: at(5), expiresAt: at(10) });
      await c.intents.cancel(merchantA, intentId(5), at(6));
      return { lapsed, pending, expired, paid };
    }

    it("leaves a pending intent past its deadline out of pending and in expired, returning it as stored", async () => {
      const { lapsed, pending, expired, paid } = await lifecycle();
      const now = at(50);

      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, status: "pending", now }), [pending]);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, status: "expired", now }), [expired, lapsed]);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, now }), [paid, expired, pending, lapsed]);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, status: "successful", now }), [paid]);
      // Listing never expires anything.
      assert.deepEqual(await c.intents.findById(merchantA, lapsed.id), lapsed);
    });

    it("counts an intent whose deadline is exactly now as lapsed", async () => {
      const { lapsed, pending } = await lifecycle();
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, status: "pending", now: at(10) }), [pending]);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, status: "pending", now: at(9) }), [pending, lapsed]);
    });

    it("applies the same rule with a clientReference and after a cursor", async () => {
      const { lapsed, expired } = await lifecycle();
      const now = at(50);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, clientReference: "lapsed", status: "pending", now }), []);
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, clientReference: "lapsed", status: "expired", now }), [
        lapsed,
      ]);
      assert.deepEqual(
        await c.listIntents({ merchantId: merchantA, limit: 10, status: "expired", now, after: { createdAt: expired.createdAt, id: expired.id } }),
        [lapsed],
      );
      assert.deepEqual(
        await c.listIntents({ merchantId: merchantA, limit: 10, clientReference: "expired", now, after: { createdAt: lapsed.createdAt, id: lapsed.id } }),
        [],
      );
    });
  });
}
