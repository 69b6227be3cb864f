/**
 * A Paystack secret key: `sk_test_` or `sk_live_` and the key's own
 * characters (Paystack issues 40 hex digits; any 20–128 letters or digits are
 * accepted, so a future length still starts). Checked once at start, so a
 * public key (`pk_…`) pasted by mistake stops the process, not the first payment.
 */
const secretKeyPattern = /^sk_(test|live)_[0-9A-Za-z]{20,128}$/;

/** isPaystackSecretKey says whether key has a Paystack secret key's form. */
export function isPaystackSecretKey(key: string): boolean {
  return secretKeyPattern.test(key);
}

/** isPaystackTestKey: a `sk_test_` key moves no money (Paystack's test mode). */
export function isPaystackTestKey(key: string): boolean {
  return key.startsWith("sk_test_");
}
