import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { BeginAttempt } from "../../src/processor/payment-processor.js";
import { createTestModeProcessor, testCards } from "../../src/processor/test-mode-processor.js";
import { chargesInJournal } from "../../src/processor/test-processor-journal.js";

const dir = mkdtempSync(join(tmpdir(), "test-processor-journal-"));
const signal = () => AbortSignal.timeout(1000);
const begin = (key: string, method: string, number = ""): BeginAttempt => ({
  idempotencyKey: key,
  paymentIntentId: "pi_1",
  merchantId: "m1",
  amount: 5000n,
  currency: "NGN",
  method,
  customerEmail: "ada@example.com",
  card: method === "card" ? { number, expiryMonth: 12, expiryYear: 2039, cvv: "123" } : undefined,
  returnUrl: "https://pay.example.com/return",
});

/** TEST_PROCESSOR_JOURNAL: what the test processor did survives its process (the kill -9 drill's count). */
describe("the test processor's journal", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps charges, outcomes, transfers on their way and refunds across a restart", async () => {
    const path = join(dir, "journal.jsonl");
    const first = createTestModeProcessor({ journalPath: path, webhookDelayMs: 3_600_000, deliver: async () => true });
    const paid = await first.begin(begin("pa_paid", "card", testCards.succeeds), signal());
    const lost = await first.begin(begin("pa_lost", "card", testCards.timesOut), signal());
    const transfer = await first.begin(begin("pa_transfer", "bank_transfer"), signal());
    assert.equal(paid.kind, "succeeded");
    assert.equal(lost.kind, "unknown");
    assert.equal(transfer.kind, "pending");
    const reference = paid.kind === "succeeded" ? paid.reference : "";
    assert.equal((await first.refund({ idempotencyKey: "rf_1", attempt: { idempotencyKey: "pa_paid", reference, amount: 5000n }, amount: 2000n }, signal())).kind, "succeeded");
    // A kill: nothing is closed.
    assert.deepEqual(Object.fromEntries(chargesInJournal(path)), { pa_paid: 1, pa_lost: 1 });

    const second = createTestModeProcessor({ journalPath: path, webhookDelayMs: 3_600_000, deliver: async () => true });
    try {
      assert.deepEqual(Object.fromEntries(second.charges()), { pa_paid: 1, pa_lost: 1 });
      assert.deepEqual(await second.status({ idempotencyKey: "pa_paid", reference, amount: 5000n }, signal()), paid);
      assert.equal((await second.status({ idempotencyKey: "pa_lost", reference: null, amount: 5000n }, signal())).kind, "succeeded");
      assert.equal((await second.status({ idempotencyKey: "pa_transfer", reference: null, amount: 5000n }, signal())).kind, "pending");
      assert.equal((await second.status({ idempotencyKey: "pa_never", reference: null, amount: 5000n }, signal())).kind, "declined");
      // A repeated begin answers the first outcome and charges nothing more.
      assert.deepEqual(await second.begin(begin("pa_paid", "card", testCards.succeeds), signal()), paid);
      // The refund is known; what is left of the payment is too.
      assert.equal((await second.refundStatus({ idempotencyKey: "rf_1", reference: null }, signal())).kind, "succeeded");
      assert.equal(second.refundedByPayment().get(reference), 2000n);
      assert.equal((await second.refund({ idempotencyKey: "rf_2", attempt: { idempotencyKey: "pa_paid", reference, amount: 5000n }, amount: 3001n }, signal())).kind, "failed");
      assert.deepEqual(Object.fromEntries(chargesInJournal(path)), { pa_paid: 1, pa_lost: 1 });
    } finally {
      first.close();
      second.close();
    }
  });

  it("a transfer whose money arrived while the process was down is settled once at the restart, and its notice sent", async () => {
    const path = join(dir, "arrived.jsonl");
    const first = createTestModeProcessor({ journalPath: path, webhookDelayMs: 50, deliver: async () => false });
    assert.equal((await first.begin(begin("pa_t", "ussd"), signal())).kind, "pending");
    first.close(); // down before the money arrived
    await new Promise((resolve) => setTimeout(resolve, 80));
    const sent: string[] = [];
    const second = createTestModeProcessor({
      journalPath: path,
      webhookDelayMs: 50,
      deliver: async (url, notice) => {
        sent.push(`${url} ${JSON.parse(notice.body).key}`);
        return true;
      },
    });
    try {
      for (let i = 0; i < 100 && sent.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(sent, ["http://127.0.0.1/processor-webhooks/test pa_t"]);
      assert.deepEqual(Object.fromEntries(chargesInJournal(path)), { pa_t: 1 });
      assert.equal((await second.status({ idempotencyKey: "pa_t", reference: null, amount: 5000n }, signal())).kind, "succeeded");
    } finally {
      second.close();
    }
  });
});
