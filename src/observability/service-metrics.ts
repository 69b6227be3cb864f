import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PaymentEvents } from "../service/payment-events.js";
import type { WebhookMetrics } from "../webhooks/webhook-metrics.js";
import type { RequestOutcome } from "./request-observer.js";

/** Latency buckets in seconds, from a cached in-memory call to a slow client. */
const requestBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Store calls are finer: a healthy query takes a millisecond or two. */
const storeBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** A webhook attempt: a fast receiver, a slow one, up to the 10 s timeout and beyond. */
const attemptBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Event recorded → delivery ended: first attempts in under a second, retries over the 32-hour schedule. */
const deliveryBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 18_000, 36_000, 86_400, 172_800];

export interface ServiceMetricsOptions {
  /**
   * Also collect process and Node.js runtime metrics (CPU, memory, event loop
   * lag, GC) into this registry. The server turns it on; tests that build many
   * apps in one process leave it off, since those collectors watch the whole
   * process.
   */
  processMetrics?: boolean;
}

/**
 * ServiceMetrics holds the service's Prometheus metrics in a registry of its
 * own (never prom-client's global default registry), so two apps in one
 * process, as in the tests, never count into each other.
 */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** Counts and times one finished request: the request observer's onRequestEnd (composeService). */
  recordRequest(outcome: RequestOutcome): void;
  /** Counts a connection the listener closed unserved or cut (caps, timeouts, protocol errors). */
  recordDroppedConnection(reason: string): void;
  /** A recorder of one store operation's call durations (bound to its labels once); used by instrumentStore. */
  storeTimer(store: string, operation: string): (seconds: number, ok: boolean) => void;
  /** Counts created intents and status transitions: the services' events (createApp). */
  readonly paymentEvents: PaymentEvents;
  /** The webhook delivery engine's metrics (payments_webhook_*). */
  readonly webhooks: WebhookMetrics;
  /** Counts a payment attempt found processing longer than PROCESSING_ALARM_AFTER (each once). */
  recordProcessingAlarm(): void;
}

/** createServiceMetrics registers every metric the README's Observability section lists. */
export function createServiceMetrics(options: ServiceMetricsOptions = {}): ServiceMetrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: "payments_requests_total",
    help: "Requests served, by protocol, route or procedure, HTTP status and (RPC only) status code.",
    labelNames: ["protocol", "route", "status", "code"] as const,
    registers,
  });
  const requestDuration = new Histogram({
    name: "payments_request_duration_seconds",
    help: "Time from receiving a request to finishing its response, by protocol and route or procedure.",
    labelNames: ["protocol", "route"] as const,
    buckets: requestBuckets,
    registers,
  });
  const storeDuration = new Histogram({
    name: "payments_store_call_duration_seconds",
    help: "Duration of store calls, by store, operation and outcome (ok or error).",
    labelNames: ["store", "operation", "outcome"] as const,
    buckets: storeBuckets,
    registers,
  });
  const created = new Counter({
    name: "payments_intents_created_total",
    help: "Payment intents created (idempotent replays are not counted).",
    registers,
  });
  const transitions = new Counter({
    name: "payments_intent_transitions_total",
    help: "Payment intent status changes, by previous and new status.",
    labelNames: ["from", "to"] as const,
    registers,
  });
  const dropped = new Counter({
    name: "payments_connections_dropped_total",
    help: "Connections closed unserved or cut by the listener, by reason (connection caps, header or write timeout, ignored GOAWAY, protocol error, a PROXY header refused).",
    labelNames: ["reason"] as const,
    registers,
  });
  const processingAlarms = new Counter({
    name: "payments_processing_alarms_total",
    help: "Payment attempts found processing longer than PROCESSING_ALARM_AFTER (each counted once): check them with the processor.",
    registers,
  });
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const webhooks = createWebhookMetrics(registers);

  // Label children are bound once and kept: prom-client would otherwise
  // hash the label object on every request. Every label is bounded (routes
  // are templates, statuses and codes a fixed set), and so are these maps.
  const routes = new Map<string, { duration: Histogram.Internal<"protocol" | "route">; counts: Map<string, Counter.Internal> }>();

  return {
    registry,
    recordRequest(outcome) {
      const routeKey = `${outcome.protocol} ${outcome.route}`;
      let route = routes.get(routeKey);
      if (!route) {
        route = { duration: requestDuration.labels(outcome.protocol, outcome.route), counts: new Map() };
        routes.set(routeKey, route);
      }
      const countKey = outcome.code === undefined ? `${outcome.status}` : `${outcome.status} ${outcome.code}`;
      let count = route.counts.get(countKey);
      if (!count) {
        count = requests.labels(outcome.protocol, outcome.route, String(outcome.status), outcome.code ?? "");
        route.counts.set(countKey, count);
      }
      count.inc();
      route.duration.observe(outcome.durationMs / 1000);
    },
    recordDroppedConnection(reason) {
      dropped.inc({ reason });
    },
    storeTimer(store, operation) {
      const ok = storeDuration.labels(store, operation, "ok");
      const error = storeDuration.labels(store, operation, "error");
      return (seconds, succeeded) => (succeeded ? ok : error).observe(seconds);
    },
    paymentEvents: {
      created: () => created.inc(),
      transitioned: (_merchantId, _intentId, from, to) => transitions.inc({ from, to }),
    },
    webhooks,
    recordProcessingAlarm: () => processingAlarms.inc(),
  };
}

/** createWebhookMetrics registers the payments_webhook_* metrics; labels are fixed sets (outcomes, states), never endpoints. */
function createWebhookMetrics(registers: Registry[]): WebhookMetrics {
  const deliveries = new Counter({
    name: "payments_webhook_deliveries_total",
    help: "Webhook deliveries ended, by outcome (succeeded, failed).",
    labelNames: ["outcome"] as const,
    registers,
  });
  const attempts = new Counter({
    name: "payments_webhook_attempts_total",
    help: "Webhook delivery attempts, by result (success, gone, http_error, timeout, connection_error, refused_address).",
    labelNames: ["result"] as const,
    registers,
  });
  const attemptDuration = new Histogram({
    name: "payments_webhook_attempt_duration_seconds",
    help: "Duration of one webhook attempt: DNS, connection and the receiver's answer.",
    buckets: attemptBuckets,
    registers,
  });
  const deliveryDuration = new Histogram({
    name: "payments_webhook_delivery_duration_seconds",
    help: "Delivery latency: from the event being recorded to its delivery ending, by outcome.",
    labelNames: ["outcome"] as const,
    buckets: deliveryBuckets,
    registers,
  });
  const depth = new Gauge({
    name: "payments_webhook_queue_depth",
    help: "Pending webhook deliveries, by state: due (to be sent now, in flight included) or waiting (a retry not yet due).",
    labelNames: ["state"] as const,
    registers,
  });
  const oldest = new Gauge({
    name: "payments_webhook_oldest_pending_seconds",
    help: "Age of the oldest pending webhook delivery (0 when none is pending).",
    registers,
  });
  return {
    attempt(outcome, seconds) {
      attempts.inc({ result: outcome.replace("-", "_") });
      attemptDuration.observe(seconds);
    },
    delivery(outcome, seconds) {
      deliveries.inc({ outcome });
      if (seconds !== null) deliveryDuration.observe({ outcome }, Math.max(0, seconds));
    },
    queue(stats, now) {
      depth.set({ state: "due" }, stats.due);
      depth.set({ state: "waiting" }, stats.pending - stats.due);
      oldest.set(stats.oldestPendingCreatedAt === null ? 0 : Math.max(0, (now.getTime() - stats.oldestPendingCreatedAt.getTime()) / 1000));
    },
  };
}
