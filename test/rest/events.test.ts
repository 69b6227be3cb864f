import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EventRecord } from "../../src/domain/event.js";
import { createRestClient, expectError, expectJson, type EventJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** A payment intent id as the service makes them. */
const piId = (n: number) => `pi_019aa3c4-0f7d-7e21-8a64-93b25c1d7e0${n}`;

describe("REST events", () => {
  let server: TestServer;
  let client: RestClient;
  const recorded: EventRecord[] = [];
  before(async () => {
    server = await startTestServer();
    client = createRestClient(server);
    const at = (second: number) => new Date(Date.UTC(2026, 11, 5, 16, 0, second));
    recorded.push(server.webhooks.record("merchantA", "payment_intent.created", piId(1), at(0)));
    recorded.push(server.webhooks.record("merchantA", "payment_intent.created", piId(2), at(1)));
    recorded.push(server.webhooks.record("merchantA", "payment_intent.succeeded", piId(1), at(2)));
    recorded.push(server.webhooks.record("merchantB", "payment_intent.created", piId(3), at(3)));
  });
  after(() => server.close());

  it("gets an event: exactly the JSON that was recorded (the webhook body)", async () => {
    const res = await client.request("GET", `/v2/events/${recorded[0]!.id}`);
    const event = expectJson<EventJson>(res, 200);
    assert.equal(res.text, recorded[0]!.body);
    assert.deepEqual(Object.keys(event), ["id", "type", "timestamp", "data", "refund"]);
    assert.equal(event.refund, null);
    assert.equal(event.id, recorded[0]!.id);
    assert.equal(event.type, "payment_intent.created");
    assert.equal(event.timestamp, "2026-12-05T16:00:00.000Z");
    assert.equal(event.data["id"], piId(1));
  });

  it("is 404 for another merchant's event and an unknown id", async () => {
    expectError(await client.request("GET", `/v2/events/${recorded[3]!.id}`), 404, new RegExp(`^event ${recorded[3]!.id} not found$`));
    expectError(await client.request("GET", "/v2/events/evt_nope"), 404, /^event evt_nope not found$/);
  });

  it("lists newest first with page tokens, filtered by type and payment intent", async () => {
    const first = expectJson<{ events: EventJson[]; nextPageToken?: string }>(await client.request("GET", "/v2/events?pageSize=2"), 200);
    assert.deepEqual(first.events.map((e) => e.id), [recorded[2]!.id, recorded[1]!.id]);
    assert.equal(typeof first.nextPageToken, "string");
    const second = expectJson<{ events: EventJson[]; nextPageToken?: string }>(
      await client.request("GET", `/v2/events?pageSize=2&pageToken=${encodeURIComponent(first.nextPageToken!)}`),
      200,
    );
    assert.deepEqual(second.events.map((e) => e.id), [recorded[0]!.id]);
    assert.equal(second.nextPageToken, undefined);
    const created = expectJson<{ events: EventJson[] }>(await client.request("GET", "/v2/events?type=payment_intent.created"), 200);
    assert.deepEqual(created.events.map((e) => e.id), [recorded[1]!.id, recorded[0]!.id]);
    const ofOne = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${piId(1)}`), 200);
    assert.deepEqual(ofOne.events.map((e) => e.id), [recorded[2]!.id, recorded[0]!.id]);
    assert.deepEqual(expectJson(await client.request("GET", `/v2/events?paymentIntentId=${piId(3)}`), 200), { events: [] });
  });

  it("refuses bad list input with 400 naming the field", async () => {
    expectError(await client.request("GET", "/v2/events?type=payment_intent.refunded"), 400, /^type must be one of payment_intent.created, /);
    expectError(await client.request("GET", "/v2/events?pageSize=0"), 400, /^pageSize must be an integer from 1 to 100$/);
    expectError(await client.request("GET", "/v2/events?pageToken=forged.token"), 400, /^pageToken is not valid for this query$/);
    const first = expectJson<{ nextPageToken: string }>(await client.request("GET", "/v2/events?pageSize=1"), 200);
    expectError(
      await client.request("GET", `/v2/events?pageSize=1&type=payment_intent.created&pageToken=${encodeURIComponent(first.nextPageToken)}`),
      400,
      /^pageToken is not valid for this query$/,
    );
    expectError(await client.request("GET", `/v2/events?pageSize=1&pageToken=${encodeURIComponent(first.nextPageToken)}`, { merchant: "merchantB" }), 400, /pageToken/);
  });

  it("redelivers to every enabled endpoint that takes the type, or to one named endpoint", async () => {
    const make = async (eventTypes: string[]) =>
      expectJson<{ id: string }>(await client.request("POST", "/v2/webhook-endpoints", { json: { url: "https://shop.example.com/r", eventTypes } }), 201).id;
    const all = await make([]);
    const succeededOnly = await make(["payment_intent.succeeded"]);
    const disabled = await make([]);
    server.webhooks.disable("merchantA", disabled);
    const res = expectJson<{ deliveries: { id: string; webhookEndpointId: string; eventId: string; status: string; attempts: unknown[]; nextAttemptAt: string }[] }>(
      await client.request("POST", `/v2/events/${recorded[0]!.id}/redeliver`, { json: {} }),
      200,
    );
    assert.deepEqual(res.deliveries.map((d) => [d.webhookEndpointId, d.eventId, d.status, d.attempts.length]), [[all, recorded[0]!.id, "pending", 0]]);
    assert.equal(Object.keys(res.deliveries[0]!).sort().join(), "attempts,createdAt,eventId,eventType,id,nextAttemptAt,status,updatedAt,webhookEndpointId");
    const one = expectJson<{ deliveries: { webhookEndpointId: string }[] }>(
      await client.request("POST", `/v2/events/${recorded[0]!.id}/redeliver`, { json: { webhookEndpointId: succeededOnly } }),
      200,
    );
    assert.deepEqual(one.deliveries.map((d) => d.webhookEndpointId), [succeededOnly]);
    expectError(
      await client.request("POST", `/v2/events/${recorded[0]!.id}/redeliver`, { json: { webhookEndpointId: disabled } }),
      409,
      new RegExp(`^webhook endpoint ${disabled} is disabled and takes no deliveries$`),
    );
    expectError(await client.request("POST", `/v2/events/${recorded[0]!.id}/redeliver`, { json: { webhookEndpointId: "we_nope" } }), 404, /^webhook endpoint we_nope not found$/);
    expectError(await client.request("POST", `/v2/events/${recorded[3]!.id}/redeliver`, { json: {} }), 404, /^event .* not found$/);
    expectError(await client.request("POST", `/v2/events/${recorded[0]!.id}/redeliver`, { json: {}, merchant: "merchantB" }), 404, /^event .* not found$/);
  });
});
