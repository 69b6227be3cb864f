import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { EventRecord } from "../../src/domain/event.js";
import { createEventMaker } from "../support/event-maker.js";
import { createManualClock } from "../support/manual-clock.js";
import { createRestClient, expectError, expectJson, type EventJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** Resolves once check() holds, looking every 10 ms. */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("REST events", () => {
  let server: TestServer;
  let client: RestClient;
  const recorded: EventRecord[] = [];
  /** The payment intents of the recorded events: 1 and 2 of merchantA, 3 of merchantB. */
  const pi: string[] = [];
  const clock = createManualClock("2026-12-05T16:00:00.000Z");
  before(async () => {
    server = await startTestServer({ clock });
    client = createRestClient(server);
    const make = createEventMaker(server);
    const at = (second: number) => clock.set(new Date(Date.UTC(2026, 11, 5, 16, 0, second)).toISOString());
    at(0);
    recorded.push(await make.created("merchantA"));
    at(1);
    recorded.push(await make.created("merchantA"));
    at(2);
    recorded.push(await make.settled(recorded[0]!.paymentIntentId, "successful", "merchantA"));
    at(3);
    recorded.push(await make.created("merchantB"));
    pi.push("", recorded[0]!.paymentIntentId, recorded[1]!.paymentIntentId, recorded[3]!.paymentIntentId);
  });
  after(() => server.close());

  it("gets an event: exactly the JSON that was recorded (the webhook body)", async () => {
    const res = await client.request("GET", `/v2/events/${recorded[0]!.id}`);
    const event = expectJson<EventJson>(res, 200);
    assert.equal(res.text, recorded[0]!.body);
    assert.deepEqual(Object.keys(event), ["id", "type", "timestamp", "data", "refund", "livemode", "apiKey"]);
    assert.equal(event.refund, null);
    assert.equal(event.id, recorded[0]!.id);
    assert.equal(event.type, "payment_intent.created");
    assert.equal(event.timestamp, "2026-12-05T16:00:00.000Z");
    assert.equal(event.data!["id"], pi[1]!);
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
    const ofOne = expectJson<{ events: EventJson[] }>(await client.request("GET", `/v2/events?paymentIntentId=${pi[1]!}`), 200);
    assert.deepEqual(ofOne.events.map((e) => e.id), [recorded[2]!.id, recorded[0]!.id]);
    assert.deepEqual(expectJson(await client.request("GET", `/v2/events?paymentIntentId=${pi[3]!}`), 200), { events: [] });
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
    const make = async (eventTypes: string[], url = "https://shop.example.com/r") =>
      expectJson<{ id: string }>(await client.request("POST", "/v2/webhook-endpoints", { json: { url, eventTypes } }), 201).id;
    const all = await make([]);
    const succeededOnly = await make(["payment_intent.succeeded"]);
    // An endpoint that answered 410 Gone is disabled by the delivery engine.
    const disabled = await make([], "https://shop.example.com/gone");
    expectJson(await client.request("POST", `/v2/events/${recorded[0]!.id}/redeliver`, { json: { webhookEndpointId: disabled } }), 200);
    const gone = await server.receivers.next();
    assert.equal(gone.request.url, "https://shop.example.com/gone");
    gone.answer({ outcome: "gone", statusCode: 410 });
    await until(async () => {
      const listed = expectJson<{ webhookEndpoints: { id: string; status: string }[] }>(await client.request("GET", "/v2/webhook-endpoints"), 200);
      return listed.webhookEndpoints.find((e) => e.id === disabled)?.status === "disabled";
    });
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
