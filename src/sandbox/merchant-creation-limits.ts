import { Code, ConnectError } from "@connectrpc/connect";
import type { Clock } from "../lib/clock.js";
import { addressGroup } from "../limits/address-group.js";
import { createMemoryRateLimiter } from "../limits/memory-rate-limiter.js";
import type { RateLimit } from "../limits/rate-limiter.js";

/**
 * MerchantCreationLimits bound what CreateMerchant, the one helper that
 * needs no key, lets anyone make: each merchant brings its own rate limit,
 * event streams and webhook endpoints, so an open sandbox must not mint
 * them without end.
 */
export interface MerchantCreationLimits {
  /**
   * run makes one merchant through create when the caller's address is
   * within its rate and the instance under its cap; otherwise it throws
   * ResourceExhausted (429, Retry-After) or FailedPrecondition (409).
   */
  run<T>(clientAddress: string | undefined, create: () => Promise<T>): Promise<T>;
}

export interface MerchantCreationLimitsOptions {
  /** TEST_MERCHANTS_MAX: merchants the helpers may make in this process's life. */
  maxMerchants: number;
  /** Per client address group (IPv4 /32, IPv6 /64). */
  perAddress: RateLimit;
  /** Real time, never the test clock: advancing the clock must not refill the bucket. */
  clock: Clock;
}

/**
 * The default rate per address: a suite that makes a merchant per test gets
 * a hundred at once and ten a second after that; a loop minting thousands a
 * second does not.
 */
export const defaultMerchantCreationRate: RateLimit = { ratePerSecond: 10, burst: 100 };

/** createMerchantCreationLimits keeps the count and the buckets in this process's memory. */
export function createMerchantCreationLimits(options: MerchantCreationLimitsOptions): MerchantCreationLimits {
  const limiter = createMemoryRateLimiter({ ...options.perAddress, clock: options.clock });
  let made = 0;
  return {
    async run(clientAddress, create) {
      if (made >= options.maxMerchants) {
        throw new ConnectError(
          `this sandbox has made its ${options.maxMerchants} merchants (TEST_MERCHANTS_MAX): reuse one, or restart the sandbox`,
          Code.FailedPrecondition,
        );
      }
      const decision = limiter.take(addressGroup(clientAddress));
      if (!decision.allowed) {
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
        const { ratePerSecond, burst } = options.perAddress;
        throw new ConnectError(
          `too many merchants made from this address: at most ${ratePerSecond} a second, bursts of ${burst}; retry after ${seconds} s`,
          Code.ResourceExhausted,
          { "retry-after": String(seconds) },
        );
      }
      made++;
      try {
        return await create();
      } catch (error) {
        made--;
        throw error;
      }
    },
  };
}
