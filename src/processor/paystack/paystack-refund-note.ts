/**
 * Paystack's POST /refund takes no idempotency key, so our refund id rides in
 * its `merchant_note` (shown on the dashboard too): a retry first looks for a
 * refund with that note, and a refund webhook names our refund by it.
 */
const prefix = "payment-intents refund ";

/** refundNote is the merchant_note of the refund whose id (our idempotency key) is refundId. */
export function refundNote(refundId: string): string {
  return `${prefix}${refundId}`;
}

/** refundIdFromNote reads our refund id back from a merchant_note; undefined when it is not one of ours. */
export function refundIdFromNote(note: unknown): string | undefined {
  if (typeof note !== "string" || !note.startsWith(prefix)) return undefined;
  const id = note.slice(prefix.length);
  return id === "" ? undefined : id;
}
