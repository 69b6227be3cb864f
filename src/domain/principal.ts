/** Principal is the authenticated caller: the merchant that owns the API key, in the key's mode, with the key's limits. */
export interface Principal {
  merchantId: string;
  merchantName: string;
  /**
   * The key's mode (issue 23, §1), read from its prefix: true for `sk_live_`.
   * Every object the call creates carries it, and the call sees only objects
   * of its mode.
   */
  livemode: boolean;
  /** The key's id (key_…): what its lastUsedAt and the key API name it by. */
  keyId: string;
  /** What the key may do (issue 23, §2); empty: everything. */
  scopes: readonly string[];
  /** Client networks the key is accepted from; empty: anywhere. */
  allowedCidrs: readonly string[];
  /** When the key stops working; null: never. A verifier answers only for keys active now. */
  expiresAt: Date | null;
}
