import { createHash } from "node:crypto";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import type { SettlementAccountRecord } from "../../src/domain/settlement-account.js";
import type { ListQuery, PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import type { SettlementAccountStore } from "../../src/store/settlement-account-store.js";

/**
 * What the store contract suites share: the merchants they write for, record
 * builders with valid values for every column, and the context a suite
 * reaches the stores under test through.
 */

/** The stores under test, fresh and empty for every test. */
export interface ContractStores {
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
  /** Releases whatever the factory opened (a connection pool, a database). */
  close?(): Promise<void>;
}

/**
 * The merchants the suite writes for. A factory whose storage has a merchants
 * table with foreign keys to it must create these two before returning.
 */
export const contractMerchants = { a: "merchantA", b: "merchantB" } as const;

const merchantA = contractMerchants.a;

/** An account limit no test reaches. */
export const unlimited = { maxPerMerchant: 1000 };

/** ContractContext is how a suite reaches the current test's stores, and inserts that must succeed. */
export interface ContractContext {
  readonly intents: PaymentIntentStore;
  readonly accounts: SettlementAccountStore;
  /** Inserts and asserts the insert happened, returning what was passed in. */
  insertIntent(overrides?: Partial<PaymentIntentRecord>): Promise<PaymentIntentRecord>;
  insertAccount(overrides?: Partial<SettlementAccountRecord>): Promise<SettlementAccountRecord>;
  /**
   * The intents of a page. `now` defaults to the suite's first instant, before
   * every record's expiresAt, so no pending intent counts as lapsed unless a
   * test says so.
   */
  listIntents(query: Omit<ListQuery, "now" | "livemode"> & { now?: Date; livemode?: boolean }): Promise<PaymentIntentRecord[]>;
}

export const baseTime = Date.parse("2024-05-01T10:00:00.000Z");

/** at(n) is n seconds and n milliseconds after a fixed instant, so every value has milliseconds. */
export function at(n: number): Date {
  return new Date(baseTime + n * 1001);
}

/** A UUIDv7-shaped id; a larger n sorts later. */
export function uuidLike(n: number): string {
  return `0190a1b2-c3d4-7e5f-8a6b-${n.toString(16).padStart(12, "0")}`;
}

export const intentId = (n: number) => `pi_${uuidLike(n)}`;
export const accountId = (n: number) => `sa_${uuidLike(n)}`;
export const accountNumber = (n: number) => String(n).padStart(10, "0");

export function intentRecord(overrides: Partial<PaymentIntentRecord> = {}): PaymentIntentRecord {
  const id = overrides.id ?? intentId(1);
  const createdAt = overrides.createdAt ?? at(0);
  return {
    id,
    merchantId: merchantA,
    livemode: false,
    amount: 50_000n,
    totalAmount: 50_000n,
    currency: "NGN",
    country: "NG",
    customerEmail: "ada@example.com",
    receiptEmail: "ada@example.com",
    status: "pending",
    clientReference: "order-1",
    paymentMethods: ["card", "bank_transfer", "ussd"],
    callbackUrl: null,
    // Valid by construction: a successful intent always has its transaction.
    transaction: overrides.status === "successful" ? `txn_${id}` : null,
    nextActionUrl: null,
    splits: [],
    meta: [],
    checkoutToken: createHash("sha256").update(`checkout ${id}`).digest("base64url"),
    requestFingerprint: createHash("sha256").update(`request ${id}`).digest("hex"),
    createdAt,
    updatedAt: createdAt,
    expiresAt: new Date(createdAt.getTime() + 86_400_000),
    deletedAt: null,
    amountRefunded: 0n,
    ...overrides,
  };
}

export function accountRecord(overrides: Partial<SettlementAccountRecord> = {}): SettlementAccountRecord {
  const createdAt = overrides.createdAt ?? at(0);
  return {
    livemode: false,
    id: accountId(1),
    merchantId: merchantA,
    accountName: "Ada Ventures",
    accountNumber: "0123456789",
    bankName: "Zenith Bank",
    bankCode: "057",
    createdAt,
    updatedAt: createdAt,
    ...overrides,
  };
}

export function newestFirst(x: { createdAt: Date; id: string }, y: { createdAt: Date; id: string }): number {
  return y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0);
}

/** Changes every mutable part of a record a caller holds. */
export function mutateIntent(record: PaymentIntentRecord): void {
  record.amount = 1n;
  record.status = "failed";
  record.clientReference = "mutated";
  record.paymentMethods.push("mutated");
  record.paymentMethods[0] = "mutated";
  for (const split of record.splits) split.splitAmount = 999n;
  record.splits.push({ settlementAccountId: "mutated", splitAmount: 1n });
  record.createdAt.setTime(0);
  record.updatedAt.setTime(0);
  record.deletedAt?.setTime(0);
}

export function mutateAccount(record: SettlementAccountRecord): void {
  record.accountName = "mutated";
  record.accountNumber = "9999999999";
  record.createdAt.setTime(0);
  record.updatedAt.setTime(0);
}
