/**
 * MerchantDirectory tells a merchant's display name, for pages customers see.
 * The checkout page has no API key, so it cannot read the name from a caller.
 */
export interface MerchantDirectory {
  nameOf(merchantId: string): Promise<string | undefined>;
}

/** MemoryMerchantDirectory also takes merchants made at run time (the test helpers'). */
export interface MemoryMerchantDirectory extends MerchantDirectory {
  add(merchantId: string, merchantName: string): void;
}

/** createMemoryMerchantDirectory serves names from the configured list (API_KEYS in memory mode) and those added later. */
export function createMemoryMerchantDirectory(merchants: readonly { merchantId: string; merchantName: string }[]): MemoryMerchantDirectory {
  const names = new Map(merchants.map((m) => [m.merchantId, m.merchantName]));
  return {
    nameOf: async (merchantId) => names.get(merchantId),
    add: (merchantId, merchantName) => void names.set(merchantId, merchantName),
  };
}
