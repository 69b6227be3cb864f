import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { PaymentAttemptRecord } from "../../src/domain/payment-attempt.js";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import type { SettlementAccountRecord } from "../../src/domain/settlement-account.js";
import type { ListQuery, PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import type { SettlementAccountStore } from "../../src/store/settlement-account-store.js";
import {
  accountId,
  accountRecord,
  at,
  contractMerchants,
  intentId,
  intentRecord,
  mutateIntent,
  newestFirst,
  unlimited,
  uuidLike,
  type ContractContext,
  type ContractStores,
} from "./contract-records.js";
import { attemptLifecycleContract } from "./attempt-lifecycle-contract.js";
import { listWithAccountsContract } from "./list-with-accounts-contract.js";
import { metaContract } from "./meta-contract.js";
import { settlementAccountStoreContract } from "./settlement-account-store-contract.js";
import { unstorableTextContract } from "./unstorable-text-contract.js";

export { contractMerchants, type ContractStores } from "./contract-records.js";

const { a: merchantA, b: merchantB } = contractMerchants;

/**
 * paymentIntentStoreContract defines the behaviour every PaymentIntentStore
 * and SettlementAccountStore implementation must share (STYLE §6), so the
 * in-memory stores and the PostgreSQL stores are checked by the same tests.
 * makeStores is called once per test and must return empty stores.
 *
 * Records use UUID-shaped ids of lower-case hex, which sort the same as text
 * in any collation and as the uuid type, and valid values for every column, so
 * an implementation with check constraints and foreign keys accepts them.
 */
export function paymentIntentStoreContract(name: string, makeStores: () => Promise<ContractStores>): void {
  describe(`${name}: store contract`, () => {
    let stores: ContractStores;
    let intents: PaymentIntentStore;
    let accounts: SettlementAccountStore;

    beforeEach(async () => {
      stores = await makeStores();
      ({ intents, accounts } = stores);
    });
    afterEach(async () => {
      await stores.close?.();
    });

    /**
     * The intents of a page. `now` defaults to the suite's first instant, before
     * every record's expiresAt, so no pending intent counts as lapsed unless a
     * test says so.
     */
    async function listIntents(query: Omit<ListQuery, "now" | "livemode"> & { now?: Date; livemode?: boolean }): Promise<PaymentIntentRecord[]> {
      return (await intents.list({ now: at(0), livemode: false, ...query })).map((item) => item.intent);
    }

    /** Inserts and asserts the insert happened, returning what was passed in. */
    async function insertIntent(overrides: Partial<PaymentIntentRecord> = {}): Promise<PaymentIntentRecord> {
      const record = intentRecord(overrides);
      const result = await intents.insert(record);
      assert.equal(result.inserted, true, `insert of ${record.id} (${record.clientReference}) was refused`);
      return record;
    }

    async function insertAccount(overrides: Partial<SettlementAccountRecord> = {}): Promise<SettlementAccountRecord> {
      const record = accountRecord(overrides);
      const result = await accounts.insert(record, unlimited);
      assert.equal(result.inserted, true, `insert of account ${record.id} was refused`);
      return record;
    }

    const context: ContractContext = {
      get intents() {
        return intents;
      },
      get accounts() {
        return accounts;
      },
      insertIntent,
      insertAccount,
      listIntents,
    };

    describe("PaymentIntentStore", () => {
      describe("insert and findById", () => {
        it("round-trips every field: bigint amounts, splits, dates with milliseconds", async () => {
          const first = await insertAccount({ id: accountId(1) });
          const second = await insertAccount({ id: accountId(2), accountNumber: "0000000002" });
          const record = intentRecord({
            id: intentId(1),
            amount: 1_000_000_000_000n,
            totalAmount: 999_999_999_999n,
            customerEmail: "ada@example.com",
            receiptEmail: "accounts@example.com",
            paymentMethods: ["ussd", "card", "paystack"],
            callbackUrl: "https://shop.example.com/return?order=7",
            transaction: "txn_123",
            splits: [
              { settlementAccountId: second.id, splitAmount: 999_999_999_998n },
              { settlementAccountId: first.id, splitAmount: 1n },
            ],
            createdAt: new Date("2024-05-01T10:00:00.123Z"),
            updatedAt: new Date("2024-05-01T10:00:01.999Z"),
          });

          const result = await intents.insert(record);

          assert.deepEqual(result, { inserted: true, record });
          assert.deepEqual(await intents.findById(merchantA, record.id), record);
        });

        it("round-trips an intent without splits, callback or transaction", async () => {
          const record = intentRecord({ splits: [], callbackUrl: null, transaction: null, paymentMethods: ["card"] });
          await intents.insert(record);
          assert.deepEqual(await intents.findById(merchantA, record.id), record);
        });

        it("finds nothing for an unknown id", async () => {
          await insertIntent();
          assert.equal(await intents.findById(merchantA, intentId(999)), undefined);
        });
      });

      describe("uniqueness of (merchantId, clientReference)", () => {
        it("refuses a second insert of the reference and returns the stored intent", async () => {
          const stored = await insertIntent({ id: intentId(1), clientReference: "order-1", amount: 500n });

          const result = await intents.insert(intentRecord({ id: intentId(2), clientReference: "order-1", amount: 700n }));

          assert.deepEqual(result, { inserted: false, existing: stored });
          assert.equal(await intents.findById(merchantA, intentId(2)), undefined);
          assert.deepEqual(await intents.findById(merchantA, intentId(1)), stored);
        });

        it("keeps the reference of a cancelled intent taken", async () => {
          await insertIntent({ id: intentId(1), clientReference: "order-1" });
          const cancelled = await intents.cancel(merchantA, intentId(1), at(60));

          const result = await intents.insert(intentRecord({ id: intentId(2), clientReference: "order-1" }));

          assert.deepEqual(result, { inserted: false, existing: cancelled });
        });

        it("allows the same reference for another merchant", async () => {
          const ofA = await insertIntent({ id: intentId(1), merchantId: merchantA, clientReference: "order-1" });
          const ofB = intentRecord({ id: intentId(2), merchantId: merchantB, clientReference: "order-1" });

          assert.deepEqual(await intents.insert(ofB), { inserted: true, record: ofB });
          assert.deepEqual(await intents.findById(merchantA, ofA.id), ofA);
          assert.deepEqual(await intents.findById(merchantB, ofB.id), ofB);
        });

        it("refuses a reused id or checkout token, writing nothing", async () => {
          const first = await insertIntent({ id: intentId(1), clientReference: "order-1" });
          const sameId = intentRecord({ id: first.id, clientReference: "order-2" });
          const sameToken = intentRecord({ id: intentId(3), clientReference: "order-3", checkoutToken: first.checkoutToken });

          await assert.rejects(intents.insert(sameId));
          await assert.rejects(intents.insert(sameToken));
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 100 }), [first]);
        });

        it("writes exactly one of 20 concurrent inserts of one reference", async () => {
          const attempts = Array.from({ length: 20 }, (_, i) =>
            intentRecord({ id: intentId(100 + i), clientReference: "race-1", amount: BigInt(1000 + i) }),
          );

          const results = await Promise.all(attempts.map((record) => intents.insert(record)));

          const winners = results.flatMap((r) => (r.inserted ? [r.record] : []));
          assert.equal(winners.length, 1);
          const winner = winners[0]!;
          for (const result of results) {
            if (!result.inserted) assert.deepEqual(result.existing, winner);
          }
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 100 }), [winner]);
          for (const attempt of attempts) {
            const found = await intents.findById(merchantA, attempt.id);
            assert.deepEqual(found, attempt.id === winner.id ? winner : undefined);
          }
        });
      });

      describe("list", () => {
        it("orders by createdAt desc, then id desc when createdAt is equal", async () => {
          // Ids and times deliberately disagree, and the insert order is neither.
          const rows = [
            { id: intentId(5), createdAt: at(10) },
            { id: intentId(1), createdAt: at(30) },
            { id: intentId(3), createdAt: at(20) },
            { id: intentId(9), createdAt: at(20) },
            { id: intentId(7), createdAt: at(20) },
            { id: intentId(2), createdAt: at(40) },
          ];
          for (const [i, row] of rows.entries()) {
            await insertIntent({ ...row, updatedAt: row.createdAt, clientReference: `order-${i}` });
          }

          const listed = await listIntents({ merchantId: merchantA, limit: 100 });

          assert.deepEqual(
            listed.map((r) => r.id),
            [intentId(2), intentId(1), intentId(9), intentId(7), intentId(3), intentId(5)],
          );
        });

        it("returns at most limit rows, the newest", async () => {
          for (let i = 1; i <= 5; i++) await insertIntent({ id: intentId(i), createdAt: at(i), clientReference: `order-${i}` });

          const listed = await listIntents({ merchantId: merchantA, limit: 2 });

          assert.deepEqual(listed.map((r) => r.id), [intentId(5), intentId(4)]);
        });

        it("pages with after through every row exactly once, ties on createdAt included", async () => {
          const inserted: PaymentIntentRecord[] = [];
          for (let i = 1; i <= 11; i++) {
            // Groups of three share a createdAt, so page boundaries fall inside ties.
            inserted.push(await insertIntent({ id: intentId(i), createdAt: at(Math.floor(i / 3)), clientReference: `order-${i}` }));
          }
          const expected = [...inserted].sort(newestFirst).map((r) => r.id);

          for (const limit of [1, 2, 3, 4, 11, 12]) {
            const seen: string[] = [];
            let after: { createdAt: Date; id: string } | undefined;
            for (let pages = 0; pages < 20; pages++) {
              const page = await listIntents({ merchantId: merchantA, limit, after });
              assert.ok(page.length <= limit);
              seen.push(...page.map((r) => r.id));
              const last = page[page.length - 1];
              if (page.length < limit || !last) break;
              after = { createdAt: last.createdAt, id: last.id };
            }
            assert.deepEqual(seen, expected, `limit ${limit}`);
          }
        });

        it("continues after a cursor whose row has since been cancelled", async () => {
          for (let i = 1; i <= 4; i++) await insertIntent({ id: intentId(i), createdAt: at(i), clientReference: `order-${i}` });
          const [first, second] = await listIntents({ merchantId: merchantA, limit: 2 });
          await intents.cancel(merchantA, second!.id, at(100));

          const next = await listIntents({ merchantId: merchantA, limit: 10, after: { createdAt: second!.createdAt, id: second!.id } });

          assert.equal(first!.id, intentId(4));
          assert.deepEqual(next.map((r) => r.id), [intentId(2), intentId(1)]);
        });

        it("filters by clientReference", async () => {
          await insertIntent({ id: intentId(1), clientReference: "order-1" });
          const wanted = await insertIntent({ id: intentId(2), clientReference: "order-2" });
          await insertIntent({ id: intentId(3), clientReference: "order-22" });

          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10, clientReference: "order-2" }), [wanted]);
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10, clientReference: "order-9" }), []);
        });

        it("filters by status, and pages within the filter", async () => {
          const statuses = ["pending", "successful", "failed", "successful", "expired", "successful"] as const;
          for (const [i, status] of statuses.entries()) {
            await insertIntent({ id: intentId(i + 1), status, createdAt: at(i), clientReference: `order-${i}` });
          }

          const successful = await listIntents({ merchantId: merchantA, limit: 10, status: "successful" });
          assert.deepEqual(successful.map((r) => r.id), [intentId(6), intentId(4), intentId(2)]);
          assert.ok(successful.every((r) => r.status === "successful"));

          const afterFirst = await listIntents({
            merchantId: merchantA,
            limit: 10,
            status: "successful",
            after: { createdAt: successful[0]!.createdAt, id: successful[0]!.id },
          });
          assert.deepEqual(afterFirst.map((r) => r.id), [intentId(4), intentId(2)]);
          assert.deepEqual((await listIntents({ merchantId: merchantA, limit: 10, status: "failed" })).map((r) => r.id), [intentId(3)]);
        });

        it("combines the clientReference and status filters", async () => {
          await insertIntent({ id: intentId(1), clientReference: "order-1", status: "pending" });
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10, clientReference: "order-1", status: "failed" }), []);
          assert.equal((await listIntents({ merchantId: merchantA, limit: 10, clientReference: "order-1", status: "pending" })).length, 1);
        });
      });

      describe("cancel (soft delete)", () => {
        it("cancels a pending intent: status cancelled, deletedAt and updatedAt set, other fields kept", async () => {
          const stored = await insertIntent({ id: intentId(1) });
          const when = new Date("2024-06-01T00:00:00.456Z");

          const cancelled = await intents.cancel(merchantA, stored.id, when);

          const expected = { ...stored, status: "cancelled", updatedAt: when, deletedAt: when };
          assert.deepEqual(cancelled, expected);
          assert.deepEqual(await intents.findById(merchantA, stored.id), expected);
        });

        it("hides a cancelled intent from list, with or without filters", async () => {
          await insertIntent({ id: intentId(1), clientReference: "order-1", createdAt: at(1) });
          const kept = await insertIntent({ id: intentId(2), clientReference: "order-2", createdAt: at(2) });
          await intents.cancel(merchantA, intentId(1), at(60));

          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10 }), [kept]);
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10, clientReference: "order-1" }), []);
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10, status: "cancelled" }), []);
        });

        it("answers undefined for a second cancel and leaves the first one's record", async () => {
          await insertIntent({ id: intentId(1) });
          const first = await intents.cancel(merchantA, intentId(1), at(60));

          assert.equal(await intents.cancel(merchantA, intentId(1), at(120)), undefined);
          assert.deepEqual(await intents.findById(merchantA, intentId(1)), first);
        });

        it("answers undefined for an intent that is no longer pending and leaves it", async () => {
          const paid = await insertIntent({ id: intentId(1), status: "successful" });

          assert.equal(await intents.cancel(merchantA, paid.id, at(60)), undefined);
          assert.deepEqual(await intents.findById(merchantA, paid.id), paid);
        });

        it("answers undefined for an unknown id", async () => {
          await insertIntent({ id: intentId(1) });
          assert.equal(await intents.cancel(merchantA, intentId(2), at(60)), undefined);
        });
      });

      describe("payment lifecycle", () => {
        function attemptRecord(overrides: Partial<PaymentAttemptRecord> = {}): PaymentAttemptRecord {
          const n = overrides.id ?? `pa_${uuidLike(900)}`;
          return {
            id: n,
            paymentIntentId: intentId(1),
            merchantId: merchantA,
            amount: 50_000n,
            method: "card",
            outcome: "declined",
            processorReference: `ref_${n}`,
            processor: "test",
            idempotencyKey: n,
            nextActionUrl: null,
            lateSuccess: null,
            declineReason: "The card was declined by its issuer.",
            createdAt: at(5),
            settledAt: at(5),
            ...overrides,
          };
        }

        it("finds an intent by its checkout token, deleted ones included, and nothing for an unknown token", async () => {
          const stored = await insertIntent({ id: intentId(1) });
          assert.deepEqual(await intents.findByCheckoutToken(stored.checkoutToken), stored);
          const cancelled = await intents.cancel(merchantA, stored.id, at(60));
          assert.deepEqual(await intents.findByCheckoutToken(stored.checkoutToken), cancelled);
          assert.equal(await intents.findByCheckoutToken(`${stored.checkoutToken}x`), undefined);
        });

        it("applies a transition only from the expected status, and only for the owner", async () => {
          const stored = await insertIntent({ id: intentId(1) });
          assert.equal(await intents.transition(merchantB, stored.id, { from: "pending", to: "expired", at: at(9) }), undefined);
          assert.equal(await intents.transition(merchantA, stored.id, { from: "successful", to: "failed", at: at(9) }), undefined);
          const paid = await intents.transition(merchantA, stored.id, { from: "pending", to: "successful", at: at(9), transaction: "txn_1" });
          assert.deepEqual(paid, { ...stored, status: "successful", transaction: "txn_1", updatedAt: at(9) });
          assert.equal(await intents.transition(merchantA, stored.id, { from: "pending", to: "expired", at: at(10) }), undefined);
          assert.deepEqual(await intents.findById(merchantA, stored.id), paid);
        });

        /** Begins an attempt (processing) and settles it with the processor's answer: the two short steps of a payment. */
        async function settled(attempt: PaymentAttemptRecord) {
          const open = { ...attempt, outcome: "processing" as const, processorReference: null, declineReason: null, settledAt: null };
          assert.equal((await intents.beginAttempt(open, at(50)))?.begun, true);
          const settlement =
            attempt.outcome === "succeeded"
              ? { outcome: "succeeded" as const, processorReference: attempt.processorReference! }
              : { outcome: "declined" as const, processorReference: attempt.processorReference, declineReason: attempt.declineReason! };
          return intents.settleAttempt(attempt.merchantId, attempt.id, settlement, { at: attempt.settledAt!, maxAttempts: 3 });
        }

        it("records each attempt and the state it leaves, and lists attempts oldest first", async () => {
          const stored = await insertIntent({ id: intentId(1) });
          const declined = attemptRecord({ id: `pa_${uuidLike(901)}`, createdAt: at(5) });
          const first = await settled(declined);
          assert.deepEqual(first, { intent: { ...stored, updatedAt: at(5) }, attempt: declined, changed: true });

          const succeeded = attemptRecord({
            id: `pa_${uuidLike(902)}`,
            outcome: "succeeded",
            declineReason: null,
            processorReference: "txn_ok",
            createdAt: at(6),
            settledAt: at(6),
          });
          const second = await settled(succeeded);
          const paid = { ...stored, status: "successful" as const, transaction: "txn_ok", updatedAt: at(6) };
          assert.deepEqual(second, { intent: paid, attempt: succeeded, changed: true });
          assert.deepEqual(await intents.findById(merchantA, stored.id), paid);
          assert.deepEqual(await intents.listAttempts(merchantA, stored.id), [declined, succeeded]);
          assert.deepEqual(await intents.listAttempts(merchantB, stored.id), []);
        });

        it("begins one attempt of concurrent ones on an intent: the others find it processing and write nothing", async () => {
          const stored = await insertIntent({ id: intentId(1) });
          const begin = (n: number) =>
            intents.beginAttempt(attemptRecord({ id: `pa_${uuidLike(910 + n)}`, outcome: "processing", processorReference: null, declineReason: null, settledAt: null, createdAt: at(7) }), at(50));
          const results = await Promise.all([begin(1), begin(2), begin(3)]);
          assert.equal(results.filter((r) => r?.begun).length, 1);
          for (const r of results.filter((r) => r && !r.begun)) assert.equal(r!.intent.status, "processing");
          const attempts = await intents.listAttempts(merchantA, stored.id);
          assert.equal(attempts.length, 1);
          assert.equal(attempts[0]!.outcome, "processing");
          assert.equal(await intents.beginAttempt(attemptRecord({ id: `pa_${uuidLike(920)}`, outcome: "processing", merchantId: merchantB }), at(50)), undefined);
        });

        it("expires live pending intents whose deadline has passed, and no others", async () => {
          const due = await insertIntent({ id: intentId(1), clientReference: "due", expiresAt: at(10) });
          const later = await insertIntent({ id: intentId(2), clientReference: "later", expiresAt: at(100) });
          const paid = await insertIntent({ id: intentId(3), clientReference: "paid", status: "successful", expiresAt: at(10) });
          const gone = await insertIntent({ id: intentId(4), clientReference: "gone", expiresAt: at(10) });
          await intents.cancel(merchantA, gone.id, at(5));
          const ofB = await insertIntent({ id: intentId(5), merchantId: merchantB, clientReference: "due-b", expiresAt: at(20) });

          const expired = await intents.expireDue(at(30), 10);
          const expected = [
            { ...due, status: "expired" as const, updatedAt: at(30) },
            { ...ofB, status: "expired" as const, updatedAt: at(30) },
          ];
          assert.deepEqual(
            [...expired].sort((a, b) => a.id.localeCompare(b.id)),
            expected,
          );
          assert.deepEqual(await intents.findById(merchantA, later.id), later);
          assert.deepEqual(await intents.findById(merchantA, paid.id), paid);
          assert.deepEqual(await intents.expireDue(at(30), 10), []);
        });

        it("expires at most limit intents per call, earliest deadline first", async () => {
          for (let i = 1; i <= 5; i++) await insertIntent({ id: intentId(i), clientReference: `r-${i}`, expiresAt: at(10 - i) });
          const first = await intents.expireDue(at(30), 2);
          assert.deepEqual(first.map((r) => r.id).sort(), [intentId(4), intentId(5)].sort());
          assert.equal((await intents.expireDue(at(30), 10)).length, 3);
        });
      });

      describe("tenant scoping", () => {
        it("findById does not find another merchant's intent", async () => {
          const ofA = await insertIntent({ id: intentId(1), merchantId: merchantA });
          assert.equal(await intents.findById(merchantB, ofA.id), undefined);
        });

        it("list shows only the merchant's own intents, with every filter", async () => {
          const ofA = await insertIntent({ id: intentId(1), merchantId: merchantA, clientReference: "order-1", createdAt: at(1) });
          const ofB = await insertIntent({ id: intentId(2), merchantId: merchantB, clientReference: "order-1", createdAt: at(2) });

          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10 }), [ofA]);
          assert.deepEqual(await listIntents({ merchantId: merchantB, limit: 10 }), [ofB]);
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10, clientReference: "order-1" }), [ofA]);
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10, status: "pending" }), [ofA]);
          // A cursor taken from another merchant's row still yields only own rows.
          assert.deepEqual(
            await listIntents({ merchantId: merchantA, limit: 10, after: { createdAt: at(3), id: intentId(9) } }),
            [ofA],
          );
          assert.deepEqual(await listIntents({ merchantId: "merchant-without-rows", limit: 10 }), []);
        });

        it("cancel of another merchant's intent answers undefined and changes nothing", async () => {
          const ofA = await insertIntent({ id: intentId(1), merchantId: merchantA });

          assert.equal(await intents.cancel(merchantB, ofA.id, at(60)), undefined);
          assert.deepEqual(await intents.findById(merchantA, ofA.id), ofA);
          assert.deepEqual(await listIntents({ merchantId: merchantA, limit: 10 }), [ofA]);
        });
      });

      describe("copies", () => {
        it("keeps what was stored when the inserted record or the returned one is mutated", async () => {
          const account = await insertAccount({ id: accountId(1) });
          const record = intentRecord({ id: intentId(1), splits: [{ settlementAccountId: account.id, splitAmount: 100n }] });
          const expected = structuredClone(record);

          const result = await intents.insert(record);
          assert.ok(result.inserted);
          mutateIntent(record);
          mutateIntent(result.record);

          assert.deepEqual(await intents.findById(merchantA, expected.id), expected);
        });

        it("keeps what was stored when records from findById, list, a refused insert and cancel are mutated", async () => {
          const account = await insertAccount({ id: accountId(1) });
          const stored = await insertIntent({ id: intentId(1), clientReference: "order-1", splits: [{ settlementAccountId: account.id, splitAmount: 100n }] });
          const expected = structuredClone(stored);

          mutateIntent((await intents.findById(merchantA, stored.id))!);
          for (const row of await listIntents({ merchantId: merchantA, limit: 10 })) mutateIntent(row);
          const refused = await intents.insert(intentRecord({ id: intentId(2), clientReference: "order-1" }));
          assert.ok(!refused.inserted);
          mutateIntent(refused.existing);

          assert.deepEqual(await intents.findById(merchantA, stored.id), expected);

          const when = at(60);
          mutateIntent((await intents.cancel(merchantA, stored.id, when))!);
          when.setTime(0);
          assert.deepEqual(await intents.findById(merchantA, stored.id), {
            ...expected,
            status: "cancelled",
            updatedAt: at(60),
            deletedAt: at(60),
          });
        });
      });
    });

    settlementAccountStoreContract(context);
    listWithAccountsContract(context);
    attemptLifecycleContract(context);
    unstorableTextContract(context);
    metaContract(context);
  });
}

