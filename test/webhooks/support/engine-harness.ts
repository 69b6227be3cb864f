import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import type { Logger } from "../../../src/lib/logger.js";
import { createDeliveryEngine, type DeliveryEngine, type DeliveryEngineOptions } from "../../../src/webhooks/delivery-engine.js";
import type { QueueStats } from "../../../src/store/delivery-queue.js";
import { createMemoryDeliveryQueue, type MemoryDeliveryQueue } from "../../../src/store/memory/memory-delivery-queue.js";
import { createRetryPolicy, defaultRetrySchedule, parseRetrySchedule } from "../../../src/webhooks/retry-policy.js";
import { generateWebhookSecret } from "../../../src/webhooks/signing.js";
import type { SigningSecret } from "../../../src/domain/signing-secrets.js";
import type { WebhookMetrics } from "../../../src/webhooks/webhook-metrics.js";
import { createWebhookSender } from "../../../src/webhooks/webhook-sender.js";
import { captureLogs, type CapturedLogs } from "../../observability/support/capture-logs.js";
import { createManualClock, type ManualClock } from "../../support/manual-clock.js";
import type { ReceivedRequest } from "./receiver.js";

/** RecordedMetrics: every call the engine made on its WebhookMetrics. */
export interface RecordedMetrics extends WebhookMetrics {
  attempts: { outcome: string; seconds: number }[];
  deliveries: { outcome: string; seconds: number | null }[];
  queues: QueueStats[];
}

export function recordMetrics(): RecordedMetrics {
  const recorded: RecordedMetrics = {
    attempts: [],
    deliveries: [],
    queues: [],
    attempt: (outcome, seconds) => void recorded.attempts.push({ outcome, seconds }),
    delivery: (outcome, seconds) => void recorded.deliveries.push({ outcome, seconds }),
    queue: (stats) => void recorded.queues.push(stats),
  };
  return recorded;
}

export interface EngineHarness {
  clock: ManualClock;
  queue: MemoryDeliveryQueue;
  engine: DeliveryEngine;
  logs: CapturedLogs;
  metrics: RecordedMetrics;
  /** Registers an endpoint at url with a fresh secret (or the given ones); returns its id and current secret. */
  endpoint(url: string, secrets?: SigningSecret[]): { id: string; secret: string };
  /** Enqueues one event for the endpoint, created now on the manual clock; returns the delivery and event ids. */
  deliver(endpointId: string, data?: Record<string, unknown>): { deliveryId: string; eventId: string; body: string };
}

export interface EngineHarnessOptions {
  schedule?: string;
  timeoutMs?: number;
  logger?: Logger;
  engine?: Partial<DeliveryEngineOptions>;
}

/**
 * startEngineHarness builds a started engine over a memory queue, a real
 * sender (private URLs allowed: receivers are on 127.0.0.1), a manual clock
 * and a retry policy without jitter, so every due time is exact.
 */
export function startEngineHarness(options: EngineHarnessOptions = {}): EngineHarness {
  const clock = createManualClock("2026-06-01T00:00:00.000Z");
  const queue = createMemoryDeliveryQueue();
  const logs = captureLogs();
  const metrics = recordMetrics();
  const engine = createDeliveryEngine({
    queue,
    sender: createWebhookSender({ timeoutMs: options.timeoutMs ?? 2000, allowPrivate: true }),
    policy: createRetryPolicy({ schedule: parseRetrySchedule(options.schedule ?? defaultRetrySchedule), random: () => 0.5 }),
    clock,
    logger: options.logger ?? logs.logger,
    metrics,
    pollIntervalMs: 50,
    ...options.engine,
  });
  engine.start();
  return {
    clock,
    queue,
    engine,
    logs,
    metrics,
    endpoint(url, secrets) {
      const id = `we_${randomUUID()}`;
      const own = secrets ?? [{ secret: generateWebhookSecret(), expiresAt: null }];
      queue.putEndpoint({ id, url, secrets: own });
      return { id, secret: own[0]!.secret };
    },
    deliver(endpointId, data = { status: "successful" }) {
      const eventId = `evt_${randomUUID()}`;
      const deliveryId = `whd_${randomUUID()}`;
      const body = JSON.stringify({ id: eventId, type: "payment_intent.succeeded", timestamp: clock.iso(), data });
      queue.enqueue({ id: deliveryId, eventId, eventType: "payment_intent.succeeded", endpointId, body, createdAt: clock.now() });
      engine.wake();
      return { deliveryId, eventId, body };
    },
  };
}

/** verifies: what a receiver does with standardwebhooks, the raw body and the headers; throws when it would refuse. */
export function verifyDelivery(secret: string, request: ReceivedRequest): unknown {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
