import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RefundOutcome } from "../../src/processor/payment-processor.js";
import { createTestModeProcessor, type TestModeProcessor } from "../../src/processor/test-mode-processor.js";
import { cards, openCheckout, payByCard } from "../checkout/support/checkout-client.js";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { expectRefund, paidIntent, refundRoutes, refundsFailCard, type RefundJson, type RefundRoutes } from "../support/refund-client.js";
import {
  createRestClient,
  expectError,
  expectJson,
  parseNextLink,
  uniqueReference,
  type PaymentIntentJson,
  type PaymentIntentListItemJson,
  type RestClient,
} from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

describe("REST refunds", () => {
  let server: TestServer;
  let client: RestClient;
  let refunds: RefundRoutes;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2026-11-22T10:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
    refunds = refundRoutes(client);
  });
  after(() => server.close());

  const read = async (id: string, merchant?: string) => expectJson<PaymentIntentListItemJson>(await client.getIntent(id, merchant), 200);
  const listAll = async (id: string) => expectJson<{ refunds: RefundJson[] }>(await refunds.list(id, "pageSize=100"), 200).refunds;

  describe("create", () => {
    it("answers 201 with Location and exactly the refund, and the intent shows amountRefunded and stays successful", async () => {
      const intent = await paidIntent(client);
      assert.equal(intent.amountRefunded, "0");
      clock.set("2026-11-22T10:05:00.123Z");
      const meta = [{ name: "ticket", value: "SUP-4411" }];
      const res = await refunds.create(intent.id, { amount: 2500, reason: "requested_by_customer", clientReference: "rf-1", meta });
      const refund = expectRefund(res, 201);
      assert.equal(res.headers.get("location"), `/v1/v2/refunds/${refund.id}`);
      assert.equal(res.headers.get("idempotent-replayed"), null);
      assert.deepEqual(refund, {
        id: refund.id,
        paymentIntentId: intent.id,
        amount: "2500",
        status: "successful",
        reason: "requested_by_customer",
        clientReference: "rf-1",
        failureReason: null,
        createdAt: "2026-11-22T10:05:00.123Z",
        updatedAt: "2026-11-22T10:05:00.123Z",
        meta,
        livemode: false,
      });
      const after = await read(intent.id);
      assert.deepEqual(after, { ...intent, amountRefunded: "2500", updatedAt: "2026-11-22T10:05:00.123Z" });
      // The refund is where Location says.
      assert.deepEqual(expectRefund(await client.request("GET", res.headers.get("location")!.replace(/^\/v1/, "")), 200), refund);
    });

    it("refunds what is left when amount is omitted, with reason requested_by_customer", async () => {
      const intent = await paidIntent(client, { amount: 10000 });
      expectRefund(await refunds.create(intent.id, { amount: 3000, clientReference: uniqueReference("rf") }), 201);
      const rest = expectRefund(await refunds.create(intent.id, { clientReference: uniqueReference("rf") }), 201);
      assert.deepEqual([rest.amount, rest.reason, rest.status], ["7000", "requested_by_customer", "successful"]);
      assert.equal((await read(intent.id)).amountRefunded, "10000");
      expectError(
        await refunds.create(intent.id, { clientReference: uniqueReference("rf") }),
        409,
        new RegExp(`^payment intent ${intent.id} is refunded in full already$`),
      );
    });

    it("takes several partial refunds up to the amount paid, and refuses one more kobo with 409, storing nothing", async () => {
      const intent = await paidIntent(client, { amount: 9000 });
      for (const [amount, reason] of [[4000, "duplicate"], [3000, "fraudulent"], [1999, "requested_by_customer"]] as const) {
        const refund = expectRefund(await refunds.create(intent.id, { amount, reason, clientReference: uniqueReference("rf") }), 201);
        assert.deepEqual([refund.amount, refund.reason], [String(amount), reason]);
      }
      expectError(
        await refunds.create(intent.id, { amount: 2, clientReference: uniqueReference("rf") }),
        409,
        new RegExp(`^amount 2 is more than the 1 left to refund of payment intent ${intent.id}$`),
      );
      assert.equal((await read(intent.id)).amountRefunded, "8999");
      assert.equal((await listAll(intent.id)).length, 3);
      expectRefund(await refunds.create(intent.id, { amount: 1, clientReference: uniqueReference("rf") }), 201);
      assert.equal((await read(intent.id)).amountRefunded, "9000");
    });

    it("never refunds more than was paid under 20 concurrent refunds", async () => {
      const intent = await paidIntent(client, { amount: 50000 });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => refunds.create(intent.id, { amount: 3000, clientReference: uniqueReference("race") })),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [...Array(16).fill(201), ...Array(4).fill(409)]);
      assert.equal((await read(intent.id)).amountRefunded, "48000");
      const listed = await listAll(intent.id);
      assert.equal(listed.length, 16);
      assert.equal(listed.reduce((sum, r) => sum + BigInt(r.amount), 0n), 48000n);
    });
  });

  describe("idempotency of clientReference", () => {
    it("replays the same reference and body with 200, Idempotent-Replayed and the same refund, changing nothing", async () => {
      const intent = await paidIntent(client);
      const body = { amount: 1500, reason: "duplicate", clientReference: uniqueReference("rf") };
      const first = expectRefund(await refunds.create(intent.id, body), 201);
      const res = await refunds.create(intent.id, body);
      assert.deepEqual(expectRefund(res, 200), first);
      assert.equal(res.headers.get("idempotent-replayed"), "true");
      assert.equal(res.headers.get("location"), null);
      assert.equal((await read(intent.id)).amountRefunded, "1500");
      assert.equal((await listAll(intent.id)).length, 1);
    });

    it("replays an omitted amount as omitted, even once nothing is left", async () => {
      const intent = await paidIntent(client, { amount: 4000 });
      const body = { clientReference: uniqueReference("rf") };
      const first = expectRefund(await refunds.create(intent.id, body), 201);
      assert.deepEqual(expectRefund(await refunds.create(intent.id, body), 200), first);
    });

    it("keeps a reference for good: a month later it still replays", async () => {
      const intent = await paidIntent(client);
      const body = { amount: 100, clientReference: uniqueReference("rf") };
      const first = expectRefund(await refunds.create(intent.id, body), 201);
      clock.advance(31 * 24 * 3_600_000);
      const res = await refunds.create(intent.id, body);
      assert.deepEqual(expectRefund(res, 200), first);
      assert.equal(res.headers.get("idempotent-replayed"), "true");
    });

    it("answers 409 for the same reference with another body, on this intent or another, and changes nothing", async () => {
      const intent = await paidIntent(client);
      const other = await paidIntent(client);
      const reference = uniqueReference("rf");
      const first = expectRefund(await refunds.create(intent.id, { amount: 1000, reason: "duplicate", clientReference: reference }), 201);
      const message = new RegExp(`^clientReference ${reference} is already used by refund ${first.id} with a different request$`);
      for (const [where, body] of [
        [intent.id, { amount: 1001, reason: "duplicate", clientReference: reference }],
        [intent.id, { amount: 1000, reason: "fraudulent", clientReference: reference }],
        [intent.id, { amount: 1000, clientReference: reference }],
        [intent.id, { reason: "duplicate", clientReference: reference }],
        [other.id, { amount: 1000, reason: "duplicate", clientReference: reference }],
      ] as const) {
        expectError(await refunds.create(where, body), 409, message);
      }
      assert.equal((await read(intent.id)).amountRefunded, "1000");
      assert.equal((await read(other.id)).amountRefunded, "0");
      assert.deepEqual(await listAll(other.id), []);
    });

    it("gives a reference used for an intent's create no meaning for refunds, and one merchant's reference none for another", async () => {
      const intent = await paidIntent(client);
      expectRefund(await refunds.create(intent.id, { amount: 10, clientReference: intent.clientReference }), 201);
      const theirs = await paidIntent(client, { merchant: "merchantB" });
      expectRefund(await refunds.create(theirs.id, { amount: 10, clientReference: intent.clientReference }, "merchantB"), 201);
    });
  });

  describe("only a successful payment intent", () => {
    const create = (intent: PaymentIntentJson | PaymentIntentListItemJson) => refunds.create(intent.id, { amount: 100, clientReference: uniqueReference("rf") });
    const newIntent = async () =>
      expectJson<PaymentIntentJson>(
        await client.createIntent({ amount: 5000, customerEmail: "ada@example.com", clientReference: uniqueReference("pi"), paymentMethod: ["card"] }),
        201,
      );

    it("answers 409 naming the status for a pending, a failed and a lapsed (expired) intent", async () => {
      const pending = await newIntent();
      expectError(await create(pending), 409, new RegExp(`^payment intent ${pending.id} is pending: only a successful payment intent can be refunded$`));

      const failed = await newIntent();
      for (let i = 0; i < 3; i++) {
        await payByCard(failed.checkoutLink, await openCheckout(failed.checkoutLink), { number: cards.declined });
      }
      assert.equal((await read(failed.id)).status, "failed");
      expectError(await create(failed), 409, new RegExp(`^payment intent ${failed.id} is failed: only a successful payment intent can be refunded$`));

      const lapsed = await newIntent();
      clock.advance(24 * 3_600_000 + 1000);
      expectError(await create(lapsed), 409, new RegExp(`^payment intent ${lapsed.id} is expired: only a successful payment intent can be refunded$`));
      for (const intent of [pending, failed, lapsed]) assert.deepEqual(await listAll(intent.id), []);
    });

    it("answers 404 for a deleted, an unknown and another merchant's intent, changing nothing", async () => {
      const deleted = await newIntent();
      expectJson(await client.deleteIntent(deleted.id), 200);
      expectError(await create(deleted), 404, new RegExp(`^payment intent ${deleted.id} not found$`));
      expectError(await refunds.create("pi_nope", { clientReference: uniqueReference("rf") }), 404, /^payment intent pi_nope not found$/);
      const theirs = await paidIntent(client, { merchant: "merchantB" });
      expectError(await create(theirs), 404, new RegExp(`^payment intent ${theirs.id} not found$`));
      assert.equal((await read(theirs.id, "merchantB")).amountRefunded, "0");
      assert.deepEqual(expectJson<{ refunds: RefundJson[] }>(await refunds.list(theirs.id, "", "merchantB"), 200).refunds, []);
    });
  });

  describe("validation", () => {
    let intent: PaymentIntentListItemJson;
    before(async () => {
      intent = await paidIntent(client);
    });
    const cases: { name: string; body: unknown; message: RegExp }[] = [
      { name: "amount 0", body: { amount: 0, clientReference: "v-1" }, message: /^amount must be an integer from 1 to 1000000000000 \(kobo\)$/ },
      { name: "a negative amount", body: { amount: -5, clientReference: "v-1" }, message: /^amount must be an integer from 1 to 1000000000000/ },
      { name: "an amount past the largest", body: { amount: 1_000_000_000_001, clientReference: "v-1" }, message: /^amount must be an integer from 1/ },
      { name: "a fractional amount", body: { amount: 1.5, clientReference: "v-1" }, message: /^amount/ },
      { name: "an amount in a string", body: { amount: "2500", clientReference: "v-1" }, message: /^amount/ },
      { name: "an unknown reason", body: { reason: "changed_mind", clientReference: "v-1" }, message: /^reason must be one of requested_by_customer, duplicate, fraudulent$/ },
      { name: "a reason only the service gives", body: { reason: "payment_after_close", clientReference: "v-1" }, message: /^reason must be one of/ },
      { name: "no clientReference", body: { amount: 100 }, message: /^clientReference is required$/ },
      { name: "a clientReference with a space", body: { clientReference: "a b" }, message: /^clientReference must be 1 to 100 characters/ },
      { name: "a clientReference of 101 characters", body: { clientReference: "x".repeat(101) }, message: /^clientReference must be 1 to 100/ },
      { name: "an unknown field", body: { clientReference: "v-1", currency: "NGN" }, message: /currency/ },
      { name: "the intent's id in the body too", body: { clientReference: "v-1", paymentIntentId: "pi_other" }, message: /^paymentIntentId is given by the path; leave it out of the body$/ },
    ];
    for (const { name, body, message } of cases) {
      it(`answers 400 for ${name}, refunding nothing`, async () => {
        expectError(await refunds.create(intent.id, body), 400, message);
        assert.equal((await read(intent.id)).amountRefunded, "0");
      });
    }
    it("stored none of the refused refunds", async () => {
      assert.deepEqual(await listAll(intent.id), []);
    });
  });

  describe("read and list", () => {
    it("reads a refund by id, and 404s an unknown one and another merchant's", async () => {
      const intent = await paidIntent(client);
      const refund = expectRefund(await refunds.create(intent.id, { amount: 700, clientReference: uniqueReference("rf") }), 201);
      assert.deepEqual(expectRefund(await refunds.get(refund.id), 200), refund);
      expectError(await refunds.get(refund.id, "merchantB"), 404, new RegExp(`^refund ${refund.id} not found$`));
      expectError(await refunds.get("rf_nope"), 404, /^refund rf_nope not found$/);
    });

    it("lists an intent's refunds newest first in keyset pages, with Link, tokens bound to the intent", async () => {
      const intent = await paidIntent(client);
      const made: RefundJson[] = [];
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        made.push(expectRefund(await refunds.create(intent.id, { amount: 100 + i, clientReference: uniqueReference("rf") }), 201));
      }
      const first = await refunds.list(intent.id, "pageSize=2");
      const page1 = expectJson<{ refunds: RefundJson[]; nextPageToken?: string }>(first, 200);
      assert.deepEqual(page1.refunds, [made[4], made[3]]);
      assert.ok(page1.nextPageToken);
      const link = parseNextLink(first.headers.get("link"));
      assert.equal(link, `/v1/v2/payment-intents/${intent.id}/refunds?pageSize=2&pageToken=${encodeURIComponent(page1.nextPageToken!)}`);
      const page2 = expectJson<{ refunds: RefundJson[]; nextPageToken?: string }>(await client.request("GET", `${server.url}${link}`), 200);
      assert.deepEqual(page2.refunds, [made[2], made[1]]);
      const page3 = expectJson<{ refunds: RefundJson[]; nextPageToken?: string }>(
        await refunds.list(intent.id, `pageSize=2&pageToken=${encodeURIComponent(page2.nextPageToken!)}`),
        200,
      );
      assert.deepEqual(page3, { refunds: [made[0]] });

      const other = await paidIntent(client);
      expectError(await refunds.list(other.id, `pageToken=${encodeURIComponent(page1.nextPageToken!)}`), 400, /^pageToken is not valid for this query$/);
      expectError(await refunds.list(intent.id, "pageSize=0"), 400, /^pageSize must be an integer from 1 to 100$/);
      expectError(await refunds.list(intent.id, "status=pending"), 400, /status/);
    });

    it("lists nothing for an intent without refunds, and 404s an unknown, deleted or another merchant's intent", async () => {
      const intent = await paidIntent(client);
      assert.deepEqual(expectJson(await refunds.list(intent.id), 200), { refunds: [] });
      expectError(await refunds.list(intent.id, "", "merchantB"), 404, new RegExp(`^payment intent ${intent.id} not found$`));
      expectError(await refunds.list("pi_nope"), 404, /^payment intent pi_nope not found$/);
    });
  });
});

/** A processor that fails the first refund it is asked for and refunds the rest as the test-mode one does. */
function failingFirstRefund(): TestModeProcessor {
  const real = createTestModeProcessor();
  let failed = false;
  return {
    ...real,
    async refund(request, signal): Promise<RefundOutcome> {
      if (failed) return real.refund(request, signal);
      failed = true;
      return { kind: "failed", reference: "rfn_declined_1", reason: "The issuer refused the refund." };
    },
  };
}

describe("REST refunds the processor fails", () => {
  let server: TestServer;
  let client: RestClient;
  let refunds: RefundRoutes;
  before(async () => {
    server = await startTestServer({ processor: failingFirstRefund() });
    client = createRestClient(server);
    refunds = refundRoutes(client);
  });
  after(() => server.close());

  it("answers the failed refund with its reason, and leaves its amount refundable again", async () => {
    const intent = await paidIntent(client, { amount: 8000 });
    const failed = expectRefund(await refunds.create(intent.id, { clientReference: uniqueReference("rf") }), 201);
    assert.deepEqual([failed.status, failed.amount, failed.failureReason], ["failed", "8000", "The issuer refused the refund."]);
    assert.equal(expectJson<PaymentIntentListItemJson>(await client.getIntent(intent.id), 200).amountRefunded, "0");
    const again = expectRefund(await refunds.create(intent.id, { amount: 8000, clientReference: uniqueReference("rf") }), 201);
    assert.equal(again.status, "successful");
    assert.equal(expectJson<PaymentIntentListItemJson>(await client.getIntent(intent.id), 200).amountRefunded, "8000");
    // A replay of the failed one shows it failed; it does not refund again.
    const replay = await refunds.create(intent.id, { clientReference: failed.clientReference });
    assert.deepEqual(expectRefund(replay, 200), failed);
  });

  it("fails every refund of a payment made with the test card 4000 0000 0000 5126", async () => {
    const sandbox = await startTestServer();
    try {
      const sandboxClient = createRestClient(sandbox);
      const intent = await paidIntent(sandboxClient, { card: refundsFailCard });
      const refund = expectRefund(await refundRoutes(sandboxClient).create(intent.id, { amount: 10, clientReference: uniqueReference("rf") }), 201);
      assert.deepEqual([refund.status, refund.failureReason], ["failed", "The test card's issuer refused the refund."]);
      assert.equal(expectJson<PaymentIntentListItemJson>(await sandboxClient.getIntent(intent.id), 200).amountRefunded, "0");
    } finally {
      await sandbox.close();
    }
  });
});
