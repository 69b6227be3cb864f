import { makeCheckoutToken } from "./checkout-token.js";
import type { Clock } from "./clock.js";
import { createRandomPool } from "./random-pool.js";
import { createUuidV7 } from "./uuid-v7.js";

/**
 * IdGenerator makes every identifier the service hands out, injected so tests
 * can predict them.
 */
export interface IdGenerator {
  /**
   * A payment intent id: "pi_", its mode ("test_" or "live_", issue 23 §1),
   * then a UUIDv7, time-ordered and opaque. Ids made before modes have no
   * mode part and keep working.
   */
  paymentIntentId(livemode: boolean): string;
  /** A settlement account id: "sa_", its mode, then a UUIDv7. */
  settlementAccountId(livemode: boolean): string;
  /** The id of a stored API key (never the key): "key_" + UUIDv7. */
  apiKeyId(): string;
  /** A payment attempt id: "pa_" + UUIDv7. */
  paymentAttemptId(): string;
  /** A refund: "rf_", its mode, then a UUIDv7; also the idempotency key of the processor's calls about it. */
  refundId(livemode: boolean): string;
  /** A merchant made at run time (the test helpers): "mer_" + UUIDv7. */
  merchantId(): string;
  /** An event: "evt_", its mode, then a UUIDv7; the webhook-id of its deliveries. */
  eventId(livemode: boolean): string;
  /** A webhook endpoint: "we_", its mode, then a UUIDv7. */
  webhookEndpointId(livemode: boolean): string;
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
  const modal = (prefix: string) => (livemode: boolean) => `${prefix}${modePart(livemode)}${uuid()}`;
  return {
    paymentIntentId: modal("pi_"),
    settlementAccountId: modal("sa_"),
    apiKeyId: () => `key_${uuid()}`,
    paymentAttemptId: () => `pa_${uuid()}`,
    refundId: modal("rf_"),
    merchantId: () => `mer_${uuid()}`,
    eventId: modal("evt_"),
    webhookEndpointId: modal("we_"),
    webhookDeliveryId: () => `whd_${uuid()}`,
    checkoutToken: (merchantId) => makeCheckoutToken(merchantId, random.take(32)),
  };
}

/** The part of an id that names its mode. */
export const modePart = (livemode: boolean): string => (livemode ? "live_" : "test_");

/**
 * modeOfId reads the mode an id shows ("pi_live_…" live, "pi_test_…" test);
 * undefined for an id made before modes, whose mode only its record knows.
 */
export function modeOfId(id: string): boolean | undefined {
  const cut = id.indexOf("_") + 1;
  if (id.startsWith("live_", cut)) return true;
  if (id.startsWith("test_", cut)) return false;
  return undefined;
}
