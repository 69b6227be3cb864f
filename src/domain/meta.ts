/**
 * MetaEntry is one item of a merchant's own data on a payment intent or a
 * refund (the contract's `meta`, §2.1): a name, unique within its list, and
 * its value. Set at create and never changed, so stores may index it once.
 */
export interface MetaEntry {
  name: string;
  value: string;
}
