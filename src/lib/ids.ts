import { randomBytes } from "node:crypto";
import type { Clock } from "./clock.js";
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
  /**
   * The capability in a checkout link. It is handed to customers, so it is
   * 256 random bits (never derived from the id) and unguessable.
   */
  checkoutToken(): string;
}

/** createIdGenerator makes ids from the given clock and crypto randomness. */
export function createIdGenerator(clock: Clock): IdGenerator {
  const uuid = createUuidV7(clock);
  return {
    paymentIntentId: () => `pi_${uuid()}`,
    settlementAccountId: () => `sa_${uuid()}`,
    apiKeyId: () => `key_${uuid()}`,
    paymentAttemptId: () => `pa_${uuid()}`,
    checkoutToken: () => randomBytes(32).toString("base64url"),
  };
}
