import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { createRestClient, expectError, expectJson, type DeliveryJson, type EventJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// The API over the server's own stores (memory, or PostgreSQL with
// TEST_STORE=postgres) with the event outbox: intents created and cancelled
// through the API record their events and deliveries, as in the service.
describe("REST events and deliveries recorded by the API's own changes", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  let everyType: string;
  let succeededOnly: string;
  before(async () => {
    clock = createManualClock("2026-12-05T16:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
    const create = async (body: unknown) => expectJson<{ id: string }>(await client.request("POST", "/v2/webhook-endpoints", { json: body }), 201).id;
    everyType = await create({ url: "https://shop.example.com/all" });
    succeededOnly = await create({ url: "https://shop.example.com/paid", eventTypes: ["payment_intent.succeeded"] });
  });
  after(() => server.close());

  it("records payment_intent.created with the intent as GET shows it, and a delivery to each endpoint taking the type", async () => {
    const intent = expectJson<{ id: string }>(
      await client.createIntent({ amount: 50000, customerEmail: "ada@example.com", clientReference: "e2e-1" }),
      201,
    );
    const page = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${intent.id}`), 200);
    assert.equal(page.events.length, 1);
    const [event] = page.events;
    assert.match(event!.id, /^evt_test_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(event!.type, "payment_intent.created");
    assert.equal(event!.timestamp, "2026-12-05T16:00:00.000Z");
    assert.deepEqual(event!.data, expectJson(await client.getIntent(intent.id), 200));
    const read = await client.request("GET", `/v2/events/${event!.id}`);
    assert.deepEqual(expectJson(read, 200), event);
    // The webhook body, as signed and sent, is GET's answer byte for byte.
    assert.equal(read.text, (await server.recordedWebhooks!.events.findById("merchantA", event!.id))!.body);

    const deliveries = expectJson<{ deliveries: DeliveryJson[] }>(await client.request("GET", `/v2/webhook-endpoints/${everyType}/deliveries`), 200);
    assert.deepEqual(deliveries.deliveries.map((d) => [d.eventId, d.eventType, d.webhookEndpointId, d.status, d.nextAttemptAt, d.attempts]), [
      [event!.id, "payment_intent.created", everyType, "pending", "2026-12-05T16:00:00.000Z", []],
    ]);
    assert.deepEqual(expectJson(await client.request("GET", `/v2/webhook-endpoints/${succeededOnly}/deliveries`), 200), { deliveries: [] });
    expectError(await client.request("GET", `/v2/events/${event!.id}`, { merchant: "merchantB" }), 404, /not found/);
    assert.deepEqual(expectJson(await client.request("GET", "/v2/events", { merchant: "merchantB" }), 200), { events: [] });
  });

  it("shows the attempts the delivery engine records", async () => {
    // The service's own engine sent the delivery; the receiver answers it now.
    const held = await server.receivers.next();
    assert.equal(held.request.url, "https://shop.example.com/all");
    const eventId = held.request.headers["webhook-id"]!;
    // The body a delivery signs and sends is GET /v2/events/{id}'s answer byte for byte.
    assert.equal(held.request.body, (await client.request("GET", `/v2/events/${eventId}`)).text);
    held.answer({ outcome: "http-error", statusCode: 503, durationMs: 42 });
    const pendingWithAttempt = async () => {
      for (;;) {
        const listed = expectJson<{ deliveries: DeliveryJson[] }>(await client.request("GET", `/v2/webhook-endpoints/${everyType}/deliveries?status=pending`), 200);
        if (listed.deliveries[0]?.attempts.length) return listed.deliveries;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    // A retry is due later, on the service's clock (the schedule's first step, with jitter).
    assert.deepEqual(
      (await pendingWithAttempt()).map((d) => [d.eventId, d.status, d.nextAttemptAt! > "2026-12-05T16:00:00.000Z", d.attempts]),
      [[eventId, "pending", true, [{ at: "2026-12-05T16:00:00.000Z", statusCode: 503, durationMs: 42, error: null }]]],
    );
    assert.deepEqual(expectJson(await client.request("GET", `/v2/webhook-endpoints/${everyType}/deliveries?status=succeeded`), 200), { deliveries: [] });
  });

  it("records payment_intent.cancelled on a delete, and redelivers an event on request", async () => {
    clock.set("2026-12-05T16:10:00.000Z");
    const intent = expectJson<{ id: string }>(await client.createIntent({ amount: 100, customerEmail: "ada@example.com", clientReference: "e2e-2" }), 201);
    clock.set("2026-12-05T16:11:00.000Z");
    expectJson(await client.deleteIntent(intent.id), 200);
    const events = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${intent.id}`), 200).events;
    assert.deepEqual(events.map((e) => [e.type, e.timestamp, e.data!["status"]]), [
      ["payment_intent.cancelled", "2026-12-05T16:11:00.000Z", "cancelled"],
      ["payment_intent.created", "2026-12-05T16:10:00.000Z", "pending"],
    ]);
    const cancelled = expectJson<{ events: EventJson[] }>(await client.request("GET", "/v2/events?type=payment_intent.cancelled"), 200).events;
    assert.deepEqual(cancelled.map((e) => e.id), [events[0]!.id]);

    clock.set("2026-12-05T16:12:00.000Z");
    const again = expectJson<{ deliveries: DeliveryJson[] }>(await client.request("POST", `/v2/events/${events[0]!.id}/redeliver`, { json: {} }), 200);
    assert.deepEqual(again.deliveries.map((d) => [d.eventId, d.webhookEndpointId, d.status, d.createdAt, d.nextAttemptAt]), [
      [events[0]!.id, everyType, "pending", "2026-12-05T16:12:00.000Z", "2026-12-05T16:12:00.000Z"],
    ]);
    const toOne = expectJson<{ deliveries: DeliveryJson[] }>(
      await client.request("POST", `/v2/events/${events[0]!.id}/redeliver`, { json: { webhookEndpointId: succeededOnly } }),
      200,
    );
    assert.deepEqual(toOne.deliveries.map((d) => d.webhookEndpointId), [succeededOnly]);
  });

  it("ends an endpoint's pending deliveries as failed when it is deleted", async () => {
    expectJson(await client.request("DELETE", `/v2/webhook-endpoints/${everyType}`), 200);
    expectError(await client.request("GET", `/v2/webhook-endpoints/${everyType}/deliveries`), 404, /not found/);
    // Nothing of the deleted endpoint is claimable any more, however late; the other endpoint's delivery (held by the engine's receiver, or claimable) still is.
    const claimable = await server.recordedWebhooks!.deliveryQueue.claim({
      now: new Date("2027-01-01T00:00:00.000Z"),
      owner: "test",
      leaseMs: 60_000,
      limit: 100,
      perEndpointLimit: 100,
    });
    assert.deepEqual(claimable.filter((d) => d.endpoint.id === everyType), []);
    const inFlight = server.receivers.held.map((held) => held.request.url);
    assert.ok([...claimable.map((d) => d.endpoint.url), ...inFlight].includes("https://shop.example.com/paid"));
  });
});
