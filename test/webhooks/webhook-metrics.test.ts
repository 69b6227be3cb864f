import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createServiceMetrics } from "../../src/observability/service-metrics.js";
import { valueOf } from "../observability/support/prometheus-text.js";

describe("ServiceMetrics.webhooks", () => {
  it("exports deliveries by outcome, attempts by result, durations and the queue gauges", async () => {
    const metrics = createServiceMetrics();
    const { webhooks } = metrics;
    webhooks.attempt("success", 0.02);
    webhooks.attempt("http-error", 0.3);
    webhooks.attempt("connection-error", 0.001);
    webhooks.attempt("refused-address", 0);
    webhooks.delivery("succeeded", 0.5);
    webhooks.delivery("failed", 117_000);
    webhooks.delivery("failed", null);
    const now = new Date("2026-06-01T00:10:00.000Z");
    webhooks.queue({ pending: 7, due: 3, oldestPendingCreatedAt: new Date("2026-06-01T00:00:00.000Z") }, now);
    const text = await metrics.registry.metrics();

    assert.equal(valueOf(text, "payments_webhook_attempts_total", { result: "success" }), 1);
    assert.equal(valueOf(text, "payments_webhook_attempts_total", { result: "http_error" }), 1);
    assert.equal(valueOf(text, "payments_webhook_attempts_total", { result: "connection_error" }), 1);
    assert.equal(valueOf(text, "payments_webhook_attempts_total", { result: "refused_address" }), 1);
    assert.equal(valueOf(text, "payments_webhook_attempt_duration_seconds_count"), 4);
    assert.equal(valueOf(text, "payments_webhook_attempt_duration_seconds_bucket", { le: "0.025" }), 3);
    assert.equal(valueOf(text, "payments_webhook_deliveries_total", { outcome: "succeeded" }), 1);
    assert.equal(valueOf(text, "payments_webhook_deliveries_total", { outcome: "failed" }), 2);
    assert.equal(valueOf(text, "payments_webhook_delivery_duration_seconds_count", { outcome: "failed" }), 1, "an untimed end is counted, not timed");
    assert.equal(valueOf(text, "payments_webhook_delivery_duration_seconds_bucket", { outcome: "succeeded", le: "0.5" }), 1);
    assert.equal(valueOf(text, "payments_webhook_delivery_duration_seconds_bucket", { outcome: "failed", le: "86400" }), 0);
    assert.equal(valueOf(text, "payments_webhook_delivery_duration_seconds_bucket", { outcome: "failed", le: "172800" }), 1);
    assert.equal(valueOf(text, "payments_webhook_queue_depth", { state: "due" }), 3);
    assert.equal(valueOf(text, "payments_webhook_queue_depth", { state: "waiting" }), 4);
    assert.equal(valueOf(text, "payments_webhook_oldest_pending_seconds"), 600);

    webhooks.queue({ pending: 0, due: 0, oldestPendingCreatedAt: null }, now);
    const empty = await metrics.registry.metrics();
    assert.equal(valueOf(empty, "payments_webhook_oldest_pending_seconds"), 0);
    assert.equal(valueOf(empty, "payments_webhook_queue_depth", { state: "due" }), 0);
  });
});
