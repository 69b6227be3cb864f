/**
 * MerchantDirectory tells a merchant's display name, for pages customers see.
 * The checkout page has no API key, so it cannot read the name from a caller.
 */
export interface MerchantDirectory {
  nameOf(merchantId: string): Promise<string | undefined>;
}

/** createMemoryMerchantDirectory serves names from a fixed list (API_KEYS in memory mode). */
export function createMemoryMerchantDirectory(merchants: readonly { merchantId: string; merchantName: string }[]): MerchantDirectory {
  const names = new Map(merchants.map((m) => [m.merchantId, m.merchantName]));
  return { nameOf: async (merchantId) => names.get(merchantId) };
}
