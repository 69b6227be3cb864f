import { Code, ConnectError } from "@connectrpc/connect";
import type { PaymentIntentStatus } from "../domain/payment-intent.js";

/**
 * The payment intent lifecycle, the one place it is written down:
 *
 *   pending ──pay──────────────▶ successful   (terminal; transaction set)
 *   pending ──N declined tries─▶ failed       (terminal)
 *   pending ──CHECKOUT_TTL─────▶ expired      (terminal)
 *   pending ──delete───────────▶ cancelled    (terminal; leaves the API)
 *
 * Every other move is refused.
 */
const allowed: Record<PaymentIntentStatus, readonly PaymentIntentStatus[]> = {
  pending: ["successful", "failed", "expired", "cancelled"],
  successful: [],
  failed: [],
  expired: [],
  cancelled: [],
};

/** canTransition tells whether the lifecycle allows from → to. */
export function canTransition(from: PaymentIntentStatus, to: PaymentIntentStatus): boolean {
  return allowed[from].includes(to);
}

/** What each refused move is called in messages. */
const verbs: Record<PaymentIntentStatus, string> = {
  pending: "reopened",
  successful: "paid",
  failed: "failed",
  expired: "expired",
  cancelled: "deleted",
};

/**
 * assertTransition refuses a move the lifecycle does not allow with
 * FailedPrecondition (409 over REST): the request was fine, the intent's state
 * is what stands in the way.
 */
export function assertTransition(id: string, from: PaymentIntentStatus, to: PaymentIntentStatus): void {
  if (!canTransition(from, to)) {
    throw new ConnectError(`payment intent ${id} is ${from} and can no longer be ${verbs[to]}`, Code.FailedPrecondition);
  }
}
