import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { expectRefund, paidIntent, refundRoutes, refundsFailCard, type RefundRoutes } from "../support/refund-client.js";
import { createRestClient, expectJson, uniqueReference, type DeliveryJson, type EventJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// Refunds made through the API over the server's own stores (memory, or
// PostgreSQL with TEST_STORE=postgres) with the event outbox: each records
// its events in its own transactions, with the refund and the intent.
describe("REST refund events", () => {
  let server: TestServer;
  let client: RestClient;
  let refunds: RefundRoutes;
  let clock: ManualClock;
  let everyType: string;
  let refundOutcomes: string;
  before(async () => {
    clock = createManualClock("2026-12-06T09:00:00.000Z");
    server = await startTestServer({ clock });
    client = createRestClient(server);
    refunds = refundRoutes(client);
    const create = async (body: unknown) => expectJson<{ id: string }>(await client.request("POST", "/v2/webhook-endpoints", { json: body }), 201).id;
    everyType = await create({ url: "https://shop.example.com/all" });
    refundOutcomes = await create({ url: "https://shop.example.com/refunds", eventTypes: ["refund.succeeded", "refund.failed"] });
  });
  after(() => server.close());

  const eventsOf = async (intentId: string) =>
    expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${intentId}`), 200).events;
  const deliveredTypes = async (endpointId: string) =>
    expectJson<{ deliveries: DeliveryJson[] }>(await client.request("GET", `/v2/webhook-endpoints/${endpointId}/deliveries?pageSize=100`), 200).deliveries.map(
      (d) => [d.eventId, d.eventType],
    );

  it("records refund.created then refund.succeeded, each with the refund and the intent as they were, delivered by type", async () => {
    const intent = await paidIntent(client);
    clock.set("2026-12-06T09:05:00.000Z");
    const refund = expectRefund(await refunds.create(intent.id, { amount: 2500, clientReference: uniqueReference("ev") }), 201);
    const events = await eventsOf(intent.id);
    assert.deepEqual(events.map((e) => e.type), ["refund.succeeded", "refund.created", "payment_intent.succeeded", "payment_intent.processing", "payment_intent.created"]);
    const [succeeded, created] = events;
    const now = expectJson<Record<string, unknown>>(await client.getIntent(intent.id), 200);
    assert.deepEqual(created!.refund, { ...refund, status: "pending" });
    assert.deepEqual(succeeded!.refund, refund);
    for (const event of [created!, succeeded!]) {
      assert.equal(event.timestamp, "2026-12-06T09:05:00.000Z");
      assert.deepEqual(event.data, now);
      assert.equal(event.data["amountRefunded"], "2500");
      assert.equal(event.data["status"], "successful");
    }
    assert.equal(events[2]!.refund, null);
    // GET /v2/events/{id} is the webhook body byte for byte, refund included.
    const read = await client.request("GET", `/v2/events/${succeeded!.id}`);
    assert.equal(read.text, (await server.recordedWebhooks!.events.findById("merchantA", succeeded!.id))!.body);

    const all = await deliveredTypes(everyType);
    assert.ok(all.some(([id, type]) => id === created!.id && type === "refund.created"));
    assert.ok(all.some(([id, type]) => id === succeeded!.id && type === "refund.succeeded"));
    assert.deepEqual(await deliveredTypes(refundOutcomes), [[succeeded!.id, "refund.succeeded"]]);
    const filtered = expectJson<{ events: EventJson[] }>(await client.request("GET", "/v2/events?type=refund.created"), 200).events;
    assert.ok(filtered.every((e) => e.type === "refund.created") && filtered.some((e) => e.id === created!.id));
  });

  it("records refund.failed with the amount given back in the intent's amountRefunded", async () => {
    const intent = await paidIntent(client, { card: refundsFailCard });
    const refund = expectRefund(await refunds.create(intent.id, { amount: 1000, clientReference: uniqueReference("ev") }), 201);
    assert.equal(refund.status, "failed");
    const [failed, created] = await eventsOf(intent.id);
    assert.deepEqual([failed!.type, created!.type], ["refund.failed", "refund.created"]);
    assert.deepEqual(failed!.refund, refund);
    assert.equal(created!.data!["amountRefunded"], "1000");
    assert.equal(failed!.data!["amountRefunded"], "0");
    assert.ok((await deliveredTypes(refundOutcomes)).some(([id, type]) => id === failed!.id && type === "refund.failed"));
  });

  it("records nothing for a replay or a refused refund, and shows merchantB none of merchantA's", async () => {
    const intent = await paidIntent(client);
    const body = { amount: 10, clientReference: uniqueReference("ev") };
    expectRefund(await refunds.create(intent.id, body), 201);
    const before = (await eventsOf(intent.id)).length;
    expectRefund(await refunds.create(intent.id, body), 200);
    assert.equal((await refunds.create(intent.id, { amount: 1_000_000, clientReference: uniqueReference("ev") })).status, 409);
    assert.equal((await eventsOf(intent.id)).length, before);
    const theirs = expectJson<{ events: EventJson[] }>(await client.request("GET", "/v2/events?type=refund.created", { merchant: "merchantB" }), 200);
    assert.deepEqual(theirs, { events: [] });
  });

  it("accepts the refund event types in an endpoint's filter", async () => {
    const res = await client.request("POST", "/v2/webhook-endpoints", { json: { url: "https://shop.example.com/r", eventTypes: ["refund.created"] } });
    assert.deepEqual(expectJson<{ eventTypes: string[] }>(res, 201).eventTypes, ["refund.created"]);
  });
});
