import type { PaymentIntentRecord } from "../../../src/domain/payment-intent.js";
import type { Clock } from "../../../src/lib/clock.js";
import type { IdGenerator } from "../../../src/lib/ids.js";

/**
 * createLiveIntents makes valid pending intents stamped with the real clock,
 * for the PostgreSQL suites that write through a live store (outages,
 * deadlines, bad values, atomicity): one valid record, each suite overriding
 * only what it is about.
 */
export function createLiveIntents(clock: Clock, ids: IdGenerator) {
  return (overrides: Partial<PaymentIntentRecord> & Pick<PaymentIntentRecord, "clientReference">): PaymentIntentRecord => {
    const now = clock.now();
    return {
      id: ids.paymentIntentId(false),
      merchantId: "merchantA",
      livemode: false,
      amount: 10_000n,
      totalAmount: 10_000n,
      currency: "NGN",
      country: "NG",
      customerEmail: "ada@example.com",
      receiptEmail: "ada@example.com",
      status: "pending",
      paymentMethods: ["card"],
      callbackUrl: null,
      transaction: null,
      nextActionUrl: null,
      splits: [],
      meta: [],
      checkoutToken: ids.checkoutToken("merchantA"),
      requestFingerprint: "0".repeat(64),
      createdAt: now,
      updatedAt: now,
      expiresAt: new Date(now.getTime() + 86_400_000),
      deletedAt: null,
      amountRefunded: 0n,
      ...overrides,
    };
  };
}
