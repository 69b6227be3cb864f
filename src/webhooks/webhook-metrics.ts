import type { DeliveryStatus, QueueStats } from "../store/delivery-queue.js";
import type { SendOutcome } from "./webhook-sender.js";

/**
 * WebhookMetrics is what the delivery engine reports, injected so the
 * engine does not know Prometheus (the server passes the prom-client
 * implementation of src/observability/service-metrics.ts; tests pass a
 * recorder). Every label is from a fixed set: never an endpoint, URL or id.
 */
export interface WebhookMetrics {
  /** One attempt ended: its outcome and its real duration in seconds. */
  attempt(outcome: Exclude<SendOutcome, "aborted">, seconds: number): void;
  /**
   * A delivery ended (succeeded or failed), seconds after its event was
   * recorded (schedule clock); null for deliveries ended without an attempt
   * of their own (their endpoint was disabled), counted but not timed.
   */
  delivery(outcome: Exclude<DeliveryStatus, "pending">, seconds: number | null): void;
  /** The queue as last measured, at the schedule time now. */
  queue(stats: QueueStats, now: Date): void;
}

/** noWebhookMetrics records nothing. */
export const noWebhookMetrics: WebhookMetrics = { attempt() {}, delivery() {}, queue() {} };
