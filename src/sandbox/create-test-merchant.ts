import { newApiKey } from "../auth/api-key-format.js";
import type { IdGenerator } from "../lib/ids.js";
import type { MerchantEnrollment } from "./merchant-enrollment.js";

/** A merchant made by the test helpers; the key is shown once, here. */
export interface TestMerchant {
  merchantId: string;
  apiKey: string;
}

/**
 * createTestMerchant makes a fresh merchant ("mer_" + a UUIDv7, so suites
 * running together never share one) with a new test-mode key in the current format
 * (auth/api-key-format.ts). name defaults to the merchant id, as for configured keys.
 */
export async function createTestMerchant(deps: { enrollment: MerchantEnrollment; ids: IdGenerator }, name?: string): Promise<TestMerchant> {
  const merchantId = deps.ids.merchantId();
  const apiKey = newApiKey("test");
  await deps.enrollment.enroll({ merchantId, name: name ?? merchantId, key: apiKey });
  return { merchantId, apiKey };
}
