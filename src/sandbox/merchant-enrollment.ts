/** NewMerchant is a merchant made at run time, with its first API key. */
export interface NewMerchant {
  merchantId: string;
  /** Shown to customers on the checkout page. */
  name: string;
  /** The key itself: stores keep only its hash. */
  key: string;
}

/**
 * MerchantEnrollment adds a merchant and its key to the stores the service
 * authenticates against and reads merchant names from, so a merchant made by
 * the test helpers behaves exactly like a configured one. The in-memory and
 * PostgreSQL implementations are chosen with the stores (open-stores.ts).
 */
export interface MerchantEnrollment {
  enroll(merchant: NewMerchant): Promise<void>;
}
