/** Principal is the authenticated caller: the merchant that owns the API key, in the key's mode. */
export interface Principal {
  merchantId: string;
  merchantName: string;
  /**
   * The key's mode (issue 23, §1), read from its prefix: true for `sk_live_`.
   * Every object the call creates carries it, and the call sees only objects
   * of its mode.
   */
  livemode: boolean;
}
