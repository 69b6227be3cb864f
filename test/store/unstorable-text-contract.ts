import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { unstorableTextMessage } from "../../src/store/storable-text.js";
import { accountId, accountRecord, at, contractMerchants, intentId, intentRecord, unlimited, type ContractContext } from "./contract-records.js";

const { a: merchantA } = contractMerchants;

/** Strings PostgreSQL cannot store as given: a NUL, and lone UTF-16 surrogates. */
const unstorable = { nul: "a\u0000b", loneHigh: "x\uD800y", loneLow: "\uDC00" } as const;

async function assertRefused(write: Promise<unknown>): Promise<void> {
  await assert.rejects(write, (error: unknown) => {
    assert.ok(error instanceof ConnectError, String(error));
    assert.equal(error.code, Code.InvalidArgument);
    assert.equal(error.rawMessage, unstorableTextMessage);
    return true;
  });
}

/**
 * unstorableTextContract: a value no store can keep as given is refused on
 * write (InvalidArgument, nothing changed) and matches nothing on read, in
 * every store alike: never an outage, never a silently altered value.
 */
export function unstorableTextContract(c: ContractContext): void {
  describe("text that cannot be stored", () => {
    const cases = [
      { field: "callbackUrl", value: unstorable.nul },
      { field: "customerEmail", value: unstorable.loneHigh },
      { field: "clientReference", value: unstorable.loneLow },
      { field: "checkoutToken", value: unstorable.nul },
    ] as const;
    for (const { field, value } of cases) {
      it(`refuses an intent whose ${field} holds ${JSON.stringify(value)}, writing nothing`, async () => {
        await assertRefused(c.intents.insert(intentRecord({ id: intentId(1), [field]: value })));
        assert.equal(await c.intents.findById(merchantA, intentId(1)), undefined);
        assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10 }), []);
      });
    }

    it("refuses unstorable payment methods and split account ids", async () => {
      await assertRefused(c.intents.insert(intentRecord({ id: intentId(1), paymentMethods: ["card", unstorable.nul] })));
      await assertRefused(
        c.intents.insert(intentRecord({ id: intentId(2), splits: [{ settlementAccountId: unstorable.loneHigh, splitAmount: 1n }] })),
      );
      assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10 }), []);
    });

    it("refuses an unstorable transaction reference in a transition, leaving the intent", async () => {
      const stored = await c.insertIntent({ id: intentId(1) });
      await assertRefused(c.intents.transition(merchantA, stored.id, { from: "pending", to: "successful", at: at(5), transaction: unstorable.nul }));
      assert.deepEqual(await c.intents.findById(merchantA, stored.id), stored);
    });

    it("refuses a settlement account with an unstorable name, writing nothing", async () => {
      await assertRefused(c.accounts.insert(accountRecord({ id: accountId(1), accountName: unstorable.nul }), unlimited));
      await assertRefused(c.accounts.insert(accountRecord({ id: accountId(2), bankName: unstorable.loneLow }), unlimited));
      assert.deepEqual(await c.accounts.listByMerchant({ livemode: false, merchantId: merchantA, limit: 10 }), []);
    });

    it("finds nothing by an unstorable id, token, reference or cursor, and changes nothing", async () => {
      const stored = await c.insertIntent({ id: intentId(1), clientReference: "order-1" });
      for (const value of Object.values(unstorable)) {
        assert.equal(await c.intents.findById(merchantA, value), undefined);
        assert.equal(await c.intents.findWithAccount(merchantA, value), undefined);
        assert.equal(await c.intents.findByCheckoutToken(value), undefined);
        assert.equal(await c.intents.cancel(merchantA, value, at(9)), undefined);
        assert.equal(await c.intents.transition(merchantA, value, { from: "pending", to: "expired", at: at(9) }), undefined);
        assert.deepEqual(await c.intents.listAttempts(merchantA, value), []);
        assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, clientReference: value }), []);
        assert.deepEqual(await c.listIntents({ merchantId: merchantA, limit: 10, after: { createdAt: at(99), id: value } }), []);
        assert.deepEqual(await c.accounts.findByIds(merchantA, [value]), []);
        assert.equal(await c.accounts.findEarliest(value, false), undefined);
        assert.deepEqual(await c.accounts.listByMerchant({ livemode: false, merchantId: value, limit: 10 }), []);
      }
      assert.deepEqual(await c.intents.findById(merchantA, stored.id), stored);
    });
  });
}
