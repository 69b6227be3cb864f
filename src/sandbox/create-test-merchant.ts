import { randomBytes } from "node:crypto";
import type { IdGenerator } from "../lib/ids.js";
import type { MerchantEnrollment } from "./merchant-enrollment.js";

/** A merchant made by the test helpers; the key is shown once, here. */
export interface TestMerchant {
  merchantId: string;
  apiKey: string;
}

/**
 * createTestMerchant makes a fresh merchant ("mer_" + a UUIDv7, so suites
 * running together never share one) with a new key: "sk_test_" + 256 random
 * bits in base64url. name defaults to the merchant id, as for configured keys.
 */
export async function createTestMerchant(deps: { enrollment: MerchantEnrollment; ids: IdGenerator }, name?: string): Promise<TestMerchant> {
  const merchantId = deps.ids.merchantId();
  const apiKey = `sk_test_${randomBytes(32).toString("base64url")}`;
  await deps.enrollment.enroll({ merchantId, name: name ?? merchantId, key: apiKey });
  return { merchantId, apiKey };
}
