import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";
import type { PaymentEvents } from "../service/payment-events.js";
import type { RequestOutcome } from "./observe-requests.js";

/** Latency buckets in seconds, from a cached in-memory call to a slow client. */
const requestBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Store calls are finer: a healthy query takes a millisecond or two. */
const storeBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

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
  /** Counts and times one finished request: the onRequestEnd of createApp. */
  recordRequest(outcome: RequestOutcome): void;
  /** Times one store call; used by instrumentStore. */
  recordStoreCall(store: string, operation: string, seconds: number, ok: boolean): void;
  /** Counts created intents and status transitions: the events of createApp. */
  readonly paymentEvents: PaymentEvents;
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
  if (options.processMetrics) collectDefaultMetrics({ register: registry });

  return {
    registry,
    recordRequest(outcome) {
      const route = { protocol: outcome.protocol, route: outcome.route };
      requests.inc({ ...route, status: String(outcome.status), code: outcome.code ?? "" });
      requestDuration.observe(route, outcome.durationMs / 1000);
    },
    recordStoreCall(store, operation, seconds, ok) {
      storeDuration.observe({ store, operation, outcome: ok ? "ok" : "error" }, seconds);
    },
    paymentEvents: {
      created: () => created.inc(),
      transitioned: (_merchantId, _intentId, from, to) => transitions.inc({ from, to }),
    },
  };
}
