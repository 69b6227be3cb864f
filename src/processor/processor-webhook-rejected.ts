/**
 * ProcessorWebhookRejected is what PaymentProcessor.parseWebhook throws when
 * a message does not verify by the processor's own scheme (a missing or
 * wrong signature, a body that is not the processor's): the route answers
 * 401 and nothing changes. The message says why, for the log; it never
 * carries the body or a secret.
 */
export class ProcessorWebhookRejected extends Error {
  override readonly name = "ProcessorWebhookRejected";
}
