import { Code, ConnectError } from "@connectrpc/connect";
import type { PaymentIntentStatus } from "../domain/payment-intent.js";

/**
 * The payment intent lifecycle, the one place it is written down:
 *
 *   pending ─────────pay──────────────▶ processing   (an attempt is with the processor)
 *   processing ──────redirect─────────▶ requires_action (nextAction set)
 *   processing, requires_action ──success──────────▶ successful (final; transaction set)
 *   processing, requires_action ──declined─────────▶ pending, or failed after N declines (final)
 *   pending ─────────CHECKOUT_TTL─────▶ expired      (final)
 *   pending ─────────delete───────────▶ cancelled    (final; leaves the API)
 *
 * An intent whose attempt is open (processing, requires_action) cannot be
 * deleted or expire: the money may be moving (Stripe refuses to cancel a
 * processing PaymentIntent too). It expires once the attempt is declined.
 * A success after a final status is a late success: recorded on the
 * attempt, refunded, and the intent keeps its status. Every other move is
 * refused.
 */
const allowed: Record<PaymentIntentStatus, readonly PaymentIntentStatus[]> = {
  pending: ["processing", "expired", "cancelled"],
  processing: ["requires_action", "successful", "pending", "failed"],
  requires_action: ["successful", "pending", "failed"],
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
  processing: "paid",
  requires_action: "sent to the customer",
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
