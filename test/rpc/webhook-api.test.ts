import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { WebhookEndpointService } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import type { EventRecord } from "../../src/domain/event.js";
import { eventMessage } from "../../src/service/event-service.js";
import { createEventMaker } from "../support/event-maker.js";
import { createManualClock } from "../support/manual-clock.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";
import { notPublicMessage, privateUrlHint } from "../../src/webhooks/endpoint-url.js";

// The unary RPCs of EventService and WebhookEndpointService over every
// protocol; each protocol gets its own server, so its lists hold its own data.
for (const protocol of rpcProtocols) {
  describe(`events and webhook endpoints over ${protocol.name}`, () => {
    let server: TestServer;
    let events: Client<typeof EventService>;
    let endpoints: Client<typeof WebhookEndpointService>;
    const recorded: EventRecord[] = [];
    const as = (merchant = "merchantA"): CallOptions => ({ headers: { authorization: server.bearer(merchant) } });

    before(async () => {
      const clock = createManualClock("2026-12-05T16:00:00.000Z");
      server = await startTestServer({ clock, caps: { maxEndpointsPerMerchant: 3 } });
      const transport = protocol.transport(server.url, []);
      events = createClient(EventService, transport);
      endpoints = createClient(WebhookEndpointService, transport);
      const make = createEventMaker(server);
      recorded.push(await make.created("merchantA"));
      clock.set("2026-12-05T16:00:01.000Z");
      recorded.push(await make.settled(recorded[0]!.paymentIntentId, "successful", "merchantA"));
      clock.set("2026-12-05T16:00:02.000Z");
      recorded.push(await make.created("merchantB"));
    });
    after(() => server.close());

    it("creates, lists, rotates and deletes an endpoint", async () => {
      const made = await endpoints.createWebhookEndpoint(
        { url: "https://shop.example.com/hooks", eventTypes: ["payment_intent.succeeded"], description: "orders" },
        as(),
      );
      assert.match(made.id, /^we_test_[0-9a-f-]{36}$/);
      assert.match(made.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(made.url, "https://shop.example.com/hooks");
      assert.deepEqual(made.eventTypes, ["payment_intent.succeeded"]);
      assert.equal(made.description, "orders");
      assert.equal(made.status, "enabled");
      const listed = await endpoints.listWebhookEndpoints({}, as());
      assert.deepEqual(
        listed.webhookEndpoints.map((e) => [e.id, e.url, e.status, e.description]),
        [[made.id, made.url, "enabled", "orders"]],
      );
      assert.equal("secret" in listed.webhookEndpoints[0]!, false);
      assert.deepEqual((await endpoints.listWebhookEndpoints({}, as("merchantB"))).webhookEndpoints, []);
      const rotated = await endpoints.rotateWebhookEndpointSecret({ id: made.id }, as());
      assert.notEqual(rotated.secret, made.secret);
      assert.equal(rotated.id, made.id);
      await expectConnectError(endpoints.rotateWebhookEndpointSecret({ id: made.id }, as("merchantB")), Code.NotFound, `webhook endpoint ${made.id} not found`);
      await expectConnectError(endpoints.deleteWebhookEndpoint({ id: made.id }, as("merchantB")), Code.NotFound, `webhook endpoint ${made.id} not found`);
      const deleted = await endpoints.deleteWebhookEndpoint({ id: made.id }, as());
      assert.deepEqual([deleted.status, deleted.title, deleted.message], [200, "OK", `Webhook endpoint ${made.id} deleted`]);
      await expectConnectError(endpoints.deleteWebhookEndpoint({ id: made.id }, as()), Code.NotFound);
      assert.deepEqual((await endpoints.listWebhookEndpoints({}, as())).webhookEndpoints, []);
    });

    it("refuses bad input with InvalidArgument naming the field, and a merchant past the cap with FailedPrecondition", async () => {
      await expectConnectError(endpoints.createWebhookEndpoint({ url: "http://shop.example.com/" }, as()), Code.InvalidArgument, `url must use https${privateUrlHint}`);
      await expectConnectError(
        endpoints.createWebhookEndpoint({ url: "https://shop.example.com/", eventTypes: ["nope"] }, as()),
        Code.InvalidArgument,
        /^eventTypes\[0\] must be one of /,
      );
      await expectConnectError(
        endpoints.createWebhookEndpoint({ url: "https://internal.example/" }, as()),
        Code.InvalidArgument,
        notPublicMessage("url"),
      );
      await expectConnectError(endpoints.listWebhookDeliveries({ id: "we_x", pageSize: 101 }, as()), Code.InvalidArgument, "pageSize must be an integer from 1 to 100");
      await expectConnectError(endpoints.listWebhookDeliveries({ id: "we_x" }, as()), Code.NotFound, "webhook endpoint we_x not found");
      await expectConnectError(events.listEvents({ type: "payment_intent.refunded" }, as()), Code.InvalidArgument, /^type must be one of /);
      await expectConnectError(events.listEvents({ pageToken: "x" }, as()), Code.InvalidArgument, "pageToken is not valid for this query");
      assert.deepEqual((await endpoints.listWebhookEndpoints({}, as())).webhookEndpoints, []);

      const made = [];
      for (let i = 0; i < 3; i++) made.push(await endpoints.createWebhookEndpoint({ url: `https://shop.example.com/${i}` }, as("merchantB")));
      await expectConnectError(
        endpoints.createWebhookEndpoint({ url: "https://shop.example.com/3" }, as("merchantB")),
        Code.FailedPrecondition,
        "a merchant may register at most 3 webhook endpoints; delete one to add another",
      );
      for (const endpoint of made) await endpoints.deleteWebhookEndpoint({ id: endpoint.id }, as("merchantB"));
    });

    it("lists and reads events; another merchant's event is NotFound", async () => {
      const page = await events.listEvents({ pageSize: 1 }, as());
      assert.deepEqual(page.events.map((e) => e.id), [recorded[1]!.id]);
      assert.deepEqual(page.events[0], eventMessage(recorded[1]!));
      const next = await events.listEvents({ pageSize: 1, pageToken: page.nextPageToken }, as());
      assert.deepEqual(next.events.map((e) => e.id), [recorded[0]!.id]);
      assert.equal(next.nextPageToken, "");
      const filtered = await events.listEvents({ type: "payment_intent.succeeded", paymentIntentId: recorded[0]!.paymentIntentId }, as());
      assert.deepEqual(filtered.events.map((e) => e.id), [recorded[1]!.id]);
      const event = await events.getEvent({ id: recorded[0]!.id }, as());
      assert.equal(event.type, "payment_intent.created");
      assert.equal(timestampDate(event.timestamp!).toISOString(), "2026-12-05T16:00:00.000Z");
      assert.equal(event.data?.id, recorded[0]!.paymentIntentId);
      await expectConnectError(events.getEvent({ id: recorded[2]!.id }, as()), Code.NotFound, `event ${recorded[2]!.id} not found`);
      await expectConnectError(events.getEvent({ id: recorded[0]!.id }, as("merchantB")), Code.NotFound);
    });

    it("redelivers an event and lists the delivery", async () => {
      const endpoint = await endpoints.createWebhookEndpoint({ url: "https://shop.example.com/redeliver" }, as());
      const { deliveries } = await events.redeliverEvent({ id: recorded[1]!.id }, as());
      assert.equal(deliveries.length, 1);
      assert.deepEqual(
        [deliveries[0]!.eventId, deliveries[0]!.eventType, deliveries[0]!.webhookEndpointId, deliveries[0]!.status, deliveries[0]!.attempts],
        [recorded[1]!.id, "payment_intent.succeeded", endpoint.id, "pending", []],
      );
      assert.match(deliveries[0]!.id, /^whd_[0-9a-f-]{36}$/);
      const listed = await endpoints.listWebhookDeliveries({ id: endpoint.id, status: "pending" }, as());
      assert.deepEqual(listed.deliveries.map((d) => d.id), [deliveries[0]!.id]);
      // The receiver answers 410 Gone: the delivery engine disables the endpoint.
      const gone = await server.receivers.next();
      assert.equal(gone.request.url, "https://shop.example.com/redeliver");
      gone.answer({ outcome: "gone", statusCode: 410 });
      const statusOf = async () => (await endpoints.listWebhookEndpoints({}, as())).webhookEndpoints.find((e) => e.id === endpoint.id)?.status;
      while ((await statusOf()) !== "disabled") await new Promise((resolve) => setTimeout(resolve, 10));
      await expectConnectError(
        events.redeliverEvent({ id: recorded[1]!.id, webhookEndpointId: endpoint.id }, as()),
        Code.FailedPrecondition,
        `webhook endpoint ${endpoint.id} is disabled and takes no deliveries`,
      );
      await expectConnectError(events.redeliverEvent({ id: recorded[1]!.id, webhookEndpointId: endpoint.id }, as("merchantB")), Code.NotFound);
      await expectConnectError(events.redeliverEvent({ id: recorded[2]!.id }, as()), Code.NotFound, `event ${recorded[2]!.id} not found`);
      await endpoints.deleteWebhookEndpoint({ id: endpoint.id }, as());
    });

    it("needs an API key", async () => {
      await expectConnectError(events.listEvents({}), Code.Unauthenticated);
      await expectConnectError(endpoints.listWebhookEndpoints({}), Code.Unauthenticated);
    });
  });
}
