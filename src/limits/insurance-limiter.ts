import { RateLimiterCompatibleAbstract, RateLimiterRes } from "rate-limiter-flexible";
import type { MemoryRateLimiter } from "./memory-rate-limiter.js";

/** InsuranceRes marks an answer that came from memory, so the caller knows Redis failed. */
export class InsuranceRes extends RateLimiterRes {}

/**
 * MemoryInsurance lets this service's in-memory token bucket stand in as
 * rate-limiter-flexible's insuranceLimiter: when a Redis call fails, the
 * library asks it instead, so a request is never failed for Redis's sake.
 * The bucket (rather than the library's RateLimiterMemory) keeps the fallback
 * identical to the limiter used without REDIS_URL, with its LRU cap on keys.
 * Only consume is used by this service; the other operations refuse.
 */
export class MemoryInsurance extends RateLimiterCompatibleAbstract {
  // Own fields, as the library reads and writes them on its insurance limiter.
  override readonly keyPrefix: string = "";
  override blockDuration = 0;
  override execEvenly = false;

  constructor(private readonly bucket: MemoryRateLimiter) {
    super();
  }

  /** options.answered: the caller stopped waiting and already answered from memory; not charged twice. */
  override consume(key: string | number, _points?: number, options?: { answered?: boolean }): Promise<RateLimiterRes> {
    if (options?.answered) return Promise.resolve(new InsuranceRes(0, 0, 0, false));
    const decision = this.bucket.take(String(key));
    return decision.allowed
      ? Promise.resolve(new InsuranceRes(0, 0, 1, false))
      : Promise.reject(new InsuranceRes(0, decision.retryAfterMs, 1, false));
  }

  override penalty(): Promise<RateLimiterRes> {
    return unsupported("penalty");
  }
  override reward(): Promise<RateLimiterRes> {
    return unsupported("reward");
  }
  override get(): Promise<RateLimiterRes | null> {
    return unsupported("get");
  }
  override set(): Promise<RateLimiterRes> {
    return unsupported("set");
  }
  override block(): Promise<RateLimiterRes> {
    return unsupported("block");
  }
  override delete(): Promise<boolean> {
    return unsupported("delete");
  }
}

function unsupported(operation: string): Promise<never> {
  return Promise.reject(new Error(`the in-memory fallback limiter does not support ${operation}`));
}
