import { makeCheckoutToken } from "./checkout-token.js";
import type { Clock } from "./clock.js";
import { createRandomPool } from "./random-pool.js";
import { createUuidV7 } from "./uuid-v7.js";

/**
 * IdGenerator makes every identifier the service hands out, injected so tests
 * can predict them.
 */
export interface IdGenerator {
  /** A payment intent id: "pi_" + UUIDv7, time-ordered and opaque. */
  paymentIntentId(): string;
  /** A settlement account id: "sa_" + UUIDv7. */
  settlementAccountId(): string;
  /** The id of a stored API key (never the key): "key_" + UUIDv7. */
  apiKeyId(): string;
  /** A payment attempt id: "pa_" + UUIDv7. */
  paymentAttemptId(): string;
  /** A refund: "rf_" + UUIDv7, also the idempotency key of the processor's calls about it. */
  refundId(): string;
  /** A merchant made at run time (the test helpers): "mer_" + UUIDv7. */
  merchantId(): string;
  /** An event: "evt_" + UUIDv7, the webhook-id of its deliveries. */
  eventId(): string;
  /** A webhook endpoint: "we_" + UUIDv7. */
  webhookEndpointId(): string;
  /** One event's delivery to one endpoint: "whd_" + UUIDv7. */
  webhookDeliveryId(): string;
  /**
   * The capability in a checkout link. It is handed to customers, so its
   * secret part is 256 random bits (never derived from the id) and
   * unguessable; it carries its merchant for routing (checkout-token.ts).
   */
  checkoutToken(merchantId: string): string;
}

/** createIdGenerator makes ids from the given clock and crypto randomness. */
export function createIdGenerator(clock: Clock): IdGenerator {
  const random = createRandomPool();
  const uuid = createUuidV7(clock, random);
  return {
    paymentIntentId: () => `pi_${uuid()}`,
    settlementAccountId: () => `sa_${uuid()}`,
    apiKeyId: () => `key_${uuid()}`,
    paymentAttemptId: () => `pa_${uuid()}`,
    refundId: () => `rf_${uuid()}`,
    merchantId: () => `mer_${uuid()}`,
    eventId: () => `evt_${uuid()}`,
    webhookEndpointId: () => `we_${uuid()}`,
    webhookDeliveryId: () => `whd_${uuid()}`,
    checkoutToken: (merchantId) => makeCheckoutToken(merchantId, random.take(32)),
  };
}
