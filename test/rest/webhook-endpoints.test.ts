import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { createRestClient, expectError, expectJson, type DeliveryJson, type EndpointJson, type RestClient } from "../support/rest-client.js";
import { createEventMaker } from "../support/event-maker.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const endpointIdPattern = /^we_test_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const secretPattern = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe("REST webhook endpoints", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2026-12-05T16:00:00.000Z");
    server = await startTestServer({ clock, caps: { maxEndpointsPerMerchant: 4 } });
    client = createRestClient(server);
  });
  after(() => server.close());

  const create = (body: unknown, merchant?: string) => client.request("POST", "/v2/webhook-endpoints", { json: body, merchant });

  it("creates an endpoint: 201 with the secret, shown this once", async () => {
    const endpoint = expectJson<EndpointJson>(
      await create({ url: "https://Shop.Example.com:443/webhooks", eventTypes: ["payment_intent.succeeded", "payment_intent.failed"], description: "orders" }),
      201,
    );
    assert.match(endpoint.id, endpointIdPattern);
    assert.match(endpoint.secret!, secretPattern);
    assert.equal(Buffer.from(endpoint.secret!.slice(6), "base64").length, 32);
    assert.deepEqual(endpoint, {
      id: endpoint.id,
      url: "https://shop.example.com/webhooks",
      eventTypes: ["payment_intent.succeeded", "payment_intent.failed"],
      description: "orders",
      status: "enabled",
      secret: endpoint.secret,
      createdAt: "2026-12-05T16:00:00.000Z",
      updatedAt: "2026-12-05T16:00:00.000Z",
      livemode: false,
    });
    const list = expectJson<{ webhookEndpoints: EndpointJson[] }>(await client.request("GET", "/v2/webhook-endpoints"), 200);
    const listed = list.webhookEndpoints.find((e) => e.id === endpoint.id);
    const { secret: _, ...withoutSecret } = endpoint;
    assert.deepEqual(listed, withoutSecret);
  });

  it("takes every type when eventTypes is omitted, and shows no description as null", async () => {
    const endpoint = expectJson<EndpointJson>(await create({ url: "https://hooks.example.com/all" }), 201);
    assert.deepEqual(endpoint.eventTypes, []);
    assert.equal(endpoint.description, null);
    const nulls = expectJson<EndpointJson>(await create({ url: "https://hooks.example.com/nulls", eventTypes: null, description: null }), 201);
    assert.deepEqual([nulls.eventTypes, nulls.description], [[], null]);
    const empty = expectJson<EndpointJson>(await create({ url: "https://hooks.example.com/empty", eventTypes: [], description: "" }), 201);
    assert.deepEqual([empty.eventTypes, empty.description], [[], null]);
    for (const made of [endpoint, nulls, empty]) expectJson(await client.request("DELETE", `/v2/webhook-endpoints/${made.id}`), 200);
  });

  it("refuses bad input with 400 naming the field, and stores nothing", async () => {
    const before = expectJson<{ webhookEndpoints: EndpointJson[] }>(await client.request("GET", "/v2/webhook-endpoints"), 200).webhookEndpoints;
    const cases: [unknown, RegExp][] = [
      [{ url: "http://shop.example.com/hooks" }, /^url must use https; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service \(development only\)$/],
      // The one URL syntax rule of every URL field; https alone is the service's rule past it.
      [{ url: "not a url" }, /^url must be an absolute http or https URL of at most 2048 characters$/],
      [{ url: `https://shop.example.com/${"a".repeat(2048)}` }, /^url must be an absolute http or https URL/],
      [{ url: "https://user:pw@shop.example.com/" }, /^url must not carry credentials$/],
      [{ url: "https://127.0.0.1/hooks" }, /^url's host does not resolve to a public address; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service \(development only\)$/],
      [{ url: "https://169.254.169.254/latest" }, /^url's host does not resolve to a public address; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service \(development only\)$/],
      [{ url: "https://internal.example/hooks" }, /^url's host does not resolve to a public address; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service \(development only\)$/],
      [{ url: "https://nowhere.invalid/hooks" }, /^url's host does not resolve to a public address; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service \(development only\)$/],
      [{ url: "https://shop.example.com/", eventTypes: ["payment_intent.refunded"] }, /^eventTypes\[0\] must be one of payment_intent.created, /],
      [{ url: "https://shop.example.com/", eventTypes: ["payment_intent.created", "payment_intent.created"] }, /^eventTypes\[1\]: "payment_intent.created" is listed twice$/],
      [{ url: "https://shop.example.com/", description: "x".repeat(257) }, /^description must be at most 256 characters of text$/],
      [{ url: "https://shop.example.com/", description: "a\nb" }, /^description must be at most 256 characters of text$/],
      [{ url: "https://shop.example.com/", secret: "whsec_mine" }, /secret/],
    ];
    for (const [body, message] of cases) expectError(await create(body), 400, message);
    const after = expectJson<{ webhookEndpoints: EndpointJson[] }>(await client.request("GET", "/v2/webhook-endpoints"), 200).webhookEndpoints;
    assert.deepEqual(after, before);
  });

  it("caps the endpoints of a merchant: 409 at the cap, and a deletion makes room", async () => {
    const merchant = "merchantB";
    const made: EndpointJson[] = [];
    for (let i = 0; i < 4; i++) made.push(expectJson<EndpointJson>(await create({ url: `https://shop.example.com/${i}` }, merchant), 201));
    expectError(await create({ url: "https://shop.example.com/5" }, merchant), 409, /^a merchant may register at most 4 webhook endpoints; delete one to add another$/);
    expectJson(await client.request("DELETE", `/v2/webhook-endpoints/${made[0]!.id}`, { merchant }), 200);
    expectJson(await create({ url: "https://shop.example.com/5" }, merchant), 201);
    for (const endpoint of made.slice(1)) expectJson(await client.request("DELETE", `/v2/webhook-endpoints/${endpoint.id}`, { merchant }), 200);
  });

  it("deletes: 200 {status, title, message}, then 404; another merchant's endpoint is 404", async () => {
    const endpoint = expectJson<EndpointJson>(await create({ url: "https://shop.example.com/gone" }), 201);
    expectError(await client.request("DELETE", `/v2/webhook-endpoints/${endpoint.id}`, { merchant: "merchantB" }), 404, new RegExp(`^webhook endpoint ${endpoint.id} not found$`));
    assert.deepEqual(expectJson(await client.request("DELETE", `/v2/webhook-endpoints/${endpoint.id}`), 200), {
      status: 200,
      title: "OK",
      message: `Webhook endpoint ${endpoint.id} deleted`,
    });
    expectError(await client.request("DELETE", `/v2/webhook-endpoints/${endpoint.id}`), 404, /not found/);
    const list = expectJson<{ webhookEndpoints: EndpointJson[] }>(await client.request("GET", "/v2/webhook-endpoints"), 200);
    assert.ok(!list.webhookEndpoints.some((e) => e.id === endpoint.id));
  });

  it("rotates the secret: 200 with a new secret; another merchant's endpoint is 404", async () => {
    const endpoint = expectJson<EndpointJson>(await create({ url: "https://shop.example.com/rotate" }), 201);
    clock.set("2026-12-05T17:00:00.000Z");
    expectError(await client.request("POST", `/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, { json: {}, merchant: "merchantB" }), 404, /not found/);
    const rotated = expectJson<EndpointJson>(await client.request("POST", `/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, { json: {} }), 200);
    assert.match(rotated.secret!, secretPattern);
    assert.notEqual(rotated.secret, endpoint.secret);
    assert.deepEqual(rotated, { ...endpoint, secret: rotated.secret, updatedAt: "2026-12-05T17:00:00.000Z" });
    clock.set("2026-12-05T16:00:00.000Z");
  });

  it("lists deliveries newest first with page tokens and a status filter", async () => {
    const endpoint = expectJson<EndpointJson>(await create({ url: "https://shop.example.com/deliveries" }), 201);
    // Three events at 16:00:00, :01 and :02, each delivered to the endpoint by the service's engine:
    // the receiver answers the first 204, and holds the other two (pending, no attempt yet).
    const maker = createEventMaker(server);
    const path = `/v2/webhook-endpoints/${endpoint.id}/deliveries`;
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.set(new Date(Date.UTC(2026, 11, 5, 16, 0, i)).toISOString());
      made.push((await maker.created()).id);
      if (i > 0) continue;
      let held = await server.receivers.next();
      while (held.request.url !== "https://shop.example.com/deliveries") held = await server.receivers.next();
      held.answer({ outcome: "success", statusCode: 204, durationMs: 12 });
      const listed = async () => expectJson<{ deliveries: DeliveryJson[] }>(await client.request("GET", `${path}?status=succeeded`), 200).deliveries;
      while ((await listed()).length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const all = expectJson<{ deliveries: DeliveryJson[] }>(await client.request("GET", path), 200).deliveries;
    const deliveryOf = (eventId: string) => all.find((d) => d.eventId === eventId)!.id;

    const first = expectJson<{ deliveries: DeliveryJson[]; nextPageToken?: string }>(await client.request("GET", `${path}?pageSize=2`), 200);
    assert.deepEqual(first.deliveries.map((d) => d.id), [deliveryOf(made[2]!), deliveryOf(made[1]!)]);
    assert.deepEqual(first.deliveries[0], {
      id: deliveryOf(made[2]!),
      eventId: made[2]!,
      eventType: "payment_intent.created",
      webhookEndpointId: endpoint.id,
      status: "pending",
      nextAttemptAt: "2026-12-05T16:00:02.000Z",
      attempts: [],
      createdAt: "2026-12-05T16:00:02.000Z",
      updatedAt: "2026-12-05T16:00:02.000Z",
    });
    const second = expectJson<{ deliveries: DeliveryJson[]; nextPageToken?: string }>(
      await client.request("GET", `${path}?pageSize=2&pageToken=${encodeURIComponent(first.nextPageToken!)}`),
      200,
    );
    assert.deepEqual(second, {
      deliveries: [
        {
          id: deliveryOf(made[0]!),
          eventId: made[0]!,
          eventType: "payment_intent.created",
          webhookEndpointId: endpoint.id,
          status: "succeeded",
          nextAttemptAt: null,
          attempts: [{ at: "2026-12-05T16:00:00.000Z", statusCode: 204, durationMs: 12, error: null }],
          createdAt: "2026-12-05T16:00:00.000Z",
          updatedAt: "2026-12-05T16:00:00.000Z",
        },
      ],
    });
    const succeeded = expectJson<{ deliveries: DeliveryJson[] }>(await client.request("GET", `${path}?status=succeeded`), 200);
    assert.deepEqual(succeeded.deliveries.map((d) => d.id), [deliveryOf(made[0]!)]);
    expectError(await client.request("GET", `${path}?status=sent`), 400, /^status must be one of pending, succeeded, failed$/);
    expectError(await client.request("GET", `${path}?pageSize=0`), 400, /^pageSize must be an integer from 1 to 100$/);
    expectError(await client.request("GET", `${path}?pageSize=101`), 400, /^pageSize must be an integer from 1 to 100$/);
    expectError(await client.request("GET", `${path}?pageSize=2&status=pending&pageToken=${encodeURIComponent(first.nextPageToken!)}`), 400, /^pageToken is not valid for this query$/);
    expectError(await client.request("GET", path, { merchant: "merchantB" }), 404, new RegExp(`^webhook endpoint ${endpoint.id} not found$`));
    expectError(await client.request("GET", "/v2/webhook-endpoints/we_unknown/deliveries"), 404, /not found/);
  });

  it("needs a key and answers 405 with Allow on a wrong method", async () => {
    expectError(await client.request("GET", "/v2/webhook-endpoints", { authorization: null }), 401, /./);
    const res = await client.request("PUT", "/v2/webhook-endpoints");
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "POST, GET, HEAD");
  });
});
