import type { EndpointEffect, NextDeliveryState } from "../store/delivery-queue.js";
import type { SendResult } from "./webhook-sender.js";

/**
 * The retry policy (README, Webhooks): what an attempt's result means for its
 * delivery and its endpoint. Pure, with time and randomness passed in, so the
 * schedule is the injected clock's and tests pin the jitter.
 */

/** The Standard Webhooks specification's suggested schedule: 7 retries over about 32.5 hours. */
export const defaultRetrySchedule = "5s,5m,30m,2h,5h,10h,10h";

/** An endpoint failing continuously this long is disabled. */
export const defaultDisableAfterFailingMs = 5 * 24 * 60 * 60 * 1000;

/** The longest pause a Retry-After header can impose on one retry. */
export const defaultMaxRetryAfterMs = 24 * 60 * 60 * 1000;

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * parseRetrySchedule reads WEBHOOK_RETRY_SCHEDULE: comma-separated delays
 * ("5s,5m,30m,2h", units ms, s, m, h, d), each the wait before the next retry
 * after a failed attempt, so N delays give N retries after the first attempt.
 * 1 to 20 delays, each from 1 ms to 7 days. Throws an Error saying what is
 * allowed.
 */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(",").map((part) => part.trim());
  const delays = parts.map((part) => {
    const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(part);
    return match ? Number(match[1]) * units[match[2]!]! : NaN;
  });
  if (delays.length > 20 || delays.some((ms) => !(ms >= 1 && ms <= 7 * 86_400_000))) {
    throw new Error("1 to 20 comma-separated delays such as 5s,5m,30m,2h (units ms, s, m, h, d), each from 1ms to 7d");
  }
  return delays;
}

export interface RetryPolicyOptions {
  /** Delays in ms before each retry (parseRetrySchedule). */
  schedule: readonly number[];
  /** Spread of each delay, as a fraction: 0.1 is ±10 %, so endpoints that failed together do not retry together. */
  jitter?: number;
  /** A number in [0, 1), as Math.random; injected so tests know the delay. */
  random?: () => number;
  /** Cap on a Retry-After (default 24 hours). */
  maxRetryAfterMs?: number;
  /** Failing continuously this long disables the endpoint (default 5 days). */
  disableAfterFailingMs?: number;
}

/** AttemptDecision: the next state of the delivery and the effect on its endpoint. */
export interface AttemptDecision {
  next: NextDeliveryState;
  endpoint: EndpointEffect;
}

/** RetryPolicy decides after each attempt. */
export interface RetryPolicy {
  /** Attempts a delivery gets in all: the first and one per delay. */
  readonly maxAttempts: number;
  /**
   * decide: result is the attempt's outcome, attemptNumber counts it (1 for
   * the first), now is when it ended on the schedule clock.
   */
  decide(result: SendResult, attemptNumber: number, now: Date): AttemptDecision;
}

/**
 * createRetryPolicy:
 * - a 2xx succeeds the delivery and clears the endpoint's failing state;
 * - 410 Gone fails the delivery at once and disables the endpoint (the
 *   receiver says the URL is gone for good);
 * - anything else (other statuses, 3xx included, a timeout, a connection
 *   error, an address refused by the SSRF rule) is retried after the next
 *   delay of the schedule, jittered, or fails the delivery when the schedule
 *   is used up; and marks the endpoint failing, which disables it once it has
 *   been failing continuously for disableAfterFailingMs;
 * - a timeout, a connection error or a refused address also pauses the
 *   endpoint's other pending deliveries until that retry (pauseUntil): a
 *   dead endpoint then takes one slot per retry, not one per delivery;
 * - Retry-After on a 429 or 503 is a floor on that delay, capped at
 *   maxRetryAfterMs (24 hours) so a receiver cannot park a delivery for ever;
 *   it never adds attempts.
 */
/** Outcomes that say the endpoint is unreachable (a circuit opens until the retry), not that it refused this one event. */
const unreachable = new Set<SendResult["outcome"]>(["timeout", "connection-error", "refused-address"]);

export function createRetryPolicy(options: RetryPolicyOptions): RetryPolicy {
  const schedule = [...options.schedule];
  const jitter = options.jitter ?? 0.1;
  const random = options.random ?? Math.random;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? defaultMaxRetryAfterMs;
  const disableAfterFailingMs = options.disableAfterFailingMs ?? defaultDisableAfterFailingMs;
  if (!(jitter >= 0 && jitter < 1)) throw new Error("jitter is a fraction from 0 to below 1");

  return {
    maxAttempts: schedule.length + 1,
    decide(result, attemptNumber, now) {
      if (result.outcome === "success") return { next: { status: "succeeded" }, endpoint: { kind: "succeeded" } };
      if (result.outcome === "gone") return { next: { status: "failed" }, endpoint: { kind: "gone" } };
      if (result.outcome === "aborted") throw new Error("an aborted attempt is released, not decided");
      const endpoint: EndpointEffect = {
        kind: "failed",
        at: now,
        disableIfFailingSince: new Date(now.getTime() - disableAfterFailingMs),
      };
      const step = schedule[attemptNumber - 1];
      if (step === undefined) return { next: { status: "failed" }, endpoint };
      let delay = Math.round(step * (1 + jitter * (2 * random() - 1)));
      if (result.retryAfterMs !== null) delay = Math.max(delay, Math.min(result.retryAfterMs, maxRetryAfterMs));
      const nextAttemptAt = new Date(now.getTime() + delay);
      // An endpoint that does not answer or refuses to connect is down, not picky: its other deliveries wait with this one.
      if (unreachable.has(result.outcome)) endpoint.pauseUntil = nextAttemptAt;
      return { next: { status: "pending", nextAttemptAt }, endpoint };
    },
  };
}
