import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { EventService, type Event } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { WebhookEndpointService } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import { startTestServer as startService, type TestServer as ServiceTestServer } from "../../src/testing/start-test-server.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { rpcProtocols } from "./support/rpc-helpers.js";
import { take } from "./support/take-stream.js";


// Events recorded by the server's own stores' outbox as intents change through the
// API, streamed over every protocol.
for (const protocol of rpcProtocols) {
  describe(`StreamEvents of the API's own changes over ${protocol.name}`, () => {
    let server: TestServer;
    let events: Client<typeof EventService>;
    let intents: Client<typeof PaymentIntentService>;
    const as = (signal?: AbortSignal): CallOptions => ({ headers: { authorization: server.bearer() }, signal });
    before(async () => {
      server = await startTestServer();
      const transport = protocol.transport(server.url, []);
      events = createClient(EventService, transport);
      intents = createClient(PaymentIntentService, transport);
    });
    after(() => server.close());

    it("resumes after a stored event and hands over to live ones in commit order", async () => {
      const first = await intents.createPaymentIntent({ amount: 100n, customerEmail: "ada@example.com", clientReference: "s-1" }, as());
      const second = await intents.createPaymentIntent({ amount: 200n, customerEmail: "ada@example.com", clientReference: "s-2" }, as());
      const [createdFirst] = (await events.listEvents({ paymentIntentId: first.id }, as())).events;
      const aborter = new AbortController();
      const stream = events.streamEvents({ afterEventId: createdFirst!.id }, as(aborter.signal))[Symbol.asyncIterator]();
      const [stored] = await take(stream, 1);
      assert.deepEqual([stored!.type, stored!.data?.id], ["payment_intent.created", second.id]);
      await intents.deletePaymentIntent({ id: first.id }, as());
      const third = await intents.createPaymentIntent({ amount: 300n, customerEmail: "ada@example.com", clientReference: "s-3" }, as());
      const live = await take(stream, 2);
      assert.deepEqual(live.map((e) => [e.type, e.data?.id, e.data?.status]), [
        ["payment_intent.cancelled", first.id, "cancelled"],
        ["payment_intent.created", third.id, "pending"],
      ]);
      const listed = (await events.listEvents({}, as())).events.map((e) => e.id);
      assert.deepEqual(listed, [...live].reverse().map((e) => e.id).concat(stored!.id, createdFirst!.id));
      aborter.abort();
    });
  });
}

// The whole service as the ./testing entry starts it: EventService and
// WebhookEndpointService are served, and open streams end at shutdown.
describe("the event and endpoint API in the started service", () => {
  let service: ServiceTestServer;
  before(async () => {
    service = await startService({ WEBHOOK_POLL_INTERVAL_MS: 50 });
  });
  after(() => service.close());

  it("serves both services over Connect and gRPC, and ends streams when the server closes", async () => {
    const as = (signal?: AbortSignal): CallOptions => ({ headers: { authorization: `Bearer ${service.apiKey}` }, signal });
    const endpoints = createClient(WebhookEndpointService, createConnectTransport({ baseUrl: service.url, httpVersion: "1.1" }));
    await assert.rejects(endpoints.createWebhookEndpoint({ url: "https://127.0.0.1/hooks" }, as()), /url's host does not resolve to a public address$/);
    const events = createClient(EventService, createGrpcTransport({ baseUrl: service.url }));
    const stream = events.streamEvents({}, as())[Symbol.asyncIterator]();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const created = await fetch(`${service.baseUrl}/v2/payment-intents`, {
      method: "POST",
      headers: { authorization: `Bearer ${service.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: 50000, customerEmail: "ada@example.com", clientReference: "service-1" }),
    });
    const intent = (await created.json()) as { id: string };
    const [event] = await take(stream, 1);
    assert.deepEqual([event!.type, event!.data?.id], ["payment_intent.created", intent.id]);
    const closed = service.close();
    assert.equal((await stream.next()).done, true);
    await closed;
  });
});
