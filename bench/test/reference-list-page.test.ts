import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderReferenceListPage, type ReferenceListRow } from "../support/reference-list-page.js";

const row = (i: number, account = false): ReferenceListRow => ({
  id: `pi_test_${i}`,
  amount: "50000",
  total_amount: "50000",
  customer_email: "ada@example.com",
  receipt_email: "ada@example.com",
  status: "pending",
  client_reference: `ref-${i}`,
  payment_methods: ["card", "bank_transfer"],
  callback_url: "https://shop.example.com/paid",
  transaction: null,
  checkout_token: `token${i}`,
  created_at: String(Date.UTC(2026, 10, 26, 6, 0, 0) - i),
  updated_at: String(Date.UTC(2026, 10, 26, 6, 0, 0) - i),
  amount_refunded: "0",
  next_action_url: null,
  meta: [],
  livemode: false,
  account_id: account ? "sa_test_1" : null,
  account_name: account ? "Ada Shop" : null,
  account_number: account ? "0123456789" : null,
  bank_name: account ? "Test Bank" : null,
  bank_code: account ? "058" : null,
  account_created_at: account ? String(Date.UTC(2026, 10, 26)) : null,
  account_updated_at: account ? String(Date.UTC(2026, 10, 26)) : null,
  account_livemode: account ? false : null,
});

const options = { publicUrl: "http://127.0.0.1:1", tokenSecret: "s", pageSize: 2 };

describe("renderReferenceListPage", () => {
  it("renders each row as our REST list item, the list item's settlement account included", () => {
    const body = JSON.parse(renderReferenceListPage([row(0, true)], options)) as { paymentIntents: unknown[] };
    assert.deepEqual(body, {
      paymentIntents: [
        {
          id: "pi_test_0",
          amount: "50000",
          totalAmount: "50000",
          currency: "NGN",
          receiptEmail: "ada@example.com",
          customerEmail: "ada@example.com",
          country: "NG",
          status: "pending",
          checkoutLink: "http://127.0.0.1:1/checkout/token0",
          clientReference: "ref-0",
          paymentMethods: [
            { id: "pm_card", type: "card", attributes: [{ name: "Visa" }, { name: "Mastercard" }, { name: "Verve" }] },
            { id: "pm_bank_transfer", type: "bank_transfer", attributes: [{ name: "Virtual account" }] },
          ],
          callbackUrl: "https://shop.example.com/paid",
          transaction: null,
          meta: [],
          settlementAccount: {
            id: "sa_test_1",
            accountName: "Ada Shop",
            accountNumber: "0123456789",
            bankName: "Test Bank",
            bankCode: "058",
            createdAt: "2026-11-26T00:00:00.000Z",
            updatedAt: "2026-11-26T00:00:00.000Z",
            livemode: false,
          },
          createdAt: "2026-11-26T06:00:00.000Z",
          updatedAt: "2026-11-26T06:00:00.000Z",
          amountRefunded: "0",
          nextAction: null,
          livemode: false,
        },
      ],
    });
  });

  it("answers pageSize items and a next page token only when the statement found one row more", () => {
    const full = JSON.parse(renderReferenceListPage([row(0), row(1), row(2)], options)) as { paymentIntents: { id: string }[]; nextPageToken?: string };
    assert.deepEqual(full.paymentIntents.map((x) => x.id), ["pi_test_0", "pi_test_1"]);
    assert.match(full.nextPageToken ?? "", /^[\w-]+\.[\w-]{43}$/);
    const last = JSON.parse(renderReferenceListPage([row(0), row(1)], options)) as { nextPageToken?: string };
    assert.equal(last.nextPageToken, undefined);
  });
});
