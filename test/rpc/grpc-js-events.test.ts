import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { EventSchema, StreamEventsRequestSchema, type Event } from "../../gen/payments/v2/events_pb.js";
import {
  CreateWebhookEndpointRequestSchema,
  DeleteWebhookEndpointRequestSchema,
  DeleteWebhookEndpointResponseSchema,
  WebhookEndpointWithSecretSchema,
} from "../../gen/payments/v2/webhook_endpoints_pb.js";
import type { EventType } from "../../src/domain/event.js";
import { createEventMaker, type EventMaker } from "../support/event-maker.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// @grpc/grpc-js shares no code with connect-node: an independent check of the
// gRPC framing of the new services, server streaming included.

describe("events and webhook endpoints with @grpc/grpc-js", () => {
  let server: TestServer;
  let client: grpc.Client;
  let maker: EventMaker;
  /** Records one event of the type through the service's own stores (see EventMaker). */
  const record = (type?: EventType, merchant?: string) => maker.record(type, merchant);
  const metadata = (merchant = "merchantA") => {
    const m = new grpc.Metadata();
    m.set("authorization", server.bearer(merchant));
    return m;
  };

  before(async () => {
    server = await startTestServer({ caps: { streamPollIntervalMs: 50 } });
    maker = createEventMaker(server);
    await maker.prepare(6);
    const Client = grpc.makeGenericClientConstructor({}, "EventService");
    client = new Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.close();
  });

  function unary<I extends DescMessage, O extends DescMessage>(
    path: string,
    input: I,
    output: O,
    init: MessageInitShape<I>,
    merchant = "merchantA",
  ): Promise<{ error: grpc.ServiceError | null; response: MessageShape<O> | undefined }> {
    return new Promise((resolve) => {
      client.makeUnaryRequest<MessageShape<I>, MessageShape<O>>(
        path,
        (message) => Buffer.from(toBinary(input, message)),
        (bytes) => fromBinary(output, bytes),
        create(input, init),
        metadata(merchant),
        { deadline: Date.now() + 5000 },
        (error, response) => resolve({ error, response }),
      );
    });
  }

  function streamEvents(init: MessageInitShape<typeof StreamEventsRequestSchema>, merchant = "merchantA") {
    return client.makeServerStreamRequest(
      "/payments.v2.EventService/StreamEvents",
      (message: MessageShape<typeof StreamEventsRequestSchema>) => Buffer.from(toBinary(StreamEventsRequestSchema, message)),
      (bytes: Buffer) => fromBinary(EventSchema, bytes),
      create(StreamEventsRequestSchema, init),
      metadata(merchant),
      {},
    );
  }

  /** Collects count events from a grpc-js stream. */
  function collect(call: grpc.ClientReadableStream<Event>, count: number): Promise<Event[]> {
    const got: Event[] = [];
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${count} events arrived`)), 5000);
      const onData = (event: Event) => {
        got.push(event);
        if (got.length === count) {
          clearTimeout(timer);
          call.off("data", onData);
          resolve(got);
        }
      };
      call.on("data", onData);
      call.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  it("creates and deletes an endpoint", async () => {
    const made = await unary(
      "/payments.v2.WebhookEndpointService/CreateWebhookEndpoint",
      CreateWebhookEndpointRequestSchema,
      WebhookEndpointWithSecretSchema,
      { url: "https://shop.example.com/grpc", eventTypes: ["payment_intent.created"] },
    );
    assert.equal(made.error, null);
    assert.match(made.response!.secret, /^whsec_/);
    const wrong = await unary(
      "/payments.v2.WebhookEndpointService/DeleteWebhookEndpoint",
      DeleteWebhookEndpointRequestSchema,
      DeleteWebhookEndpointResponseSchema,
      { id: made.response!.id },
      "merchantB",
    );
    assert.equal(wrong.error?.code, grpc.status.NOT_FOUND);
    assert.equal(wrong.error?.details, `webhook endpoint ${made.response!.id} not found`);
    const deleted = await unary(
      "/payments.v2.WebhookEndpointService/DeleteWebhookEndpoint",
      DeleteWebhookEndpointRequestSchema,
      DeleteWebhookEndpointResponseSchema,
      { id: made.response!.id },
    );
    assert.equal(deleted.error, null);
    assert.equal(deleted.response!.message, `Webhook endpoint ${made.response!.id} deleted`);
    const invalid = await unary(
      "/payments.v2.WebhookEndpointService/CreateWebhookEndpoint",
      CreateWebhookEndpointRequestSchema,
      WebhookEndpointWithSecretSchema,
      { url: "https://shop.example.com/", description: "x".repeat(300) },
    );
    assert.equal(invalid.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(invalid.error?.details, "description must be at most 256 characters of text");
  });

  it("streams stored events after the cursor, then live ones, filtered by type", async () => {
    const from = await record();
    const stored = [await record(), await record("payment_intent.succeeded")];
    await record("payment_intent.created", "merchantB");
    const call = streamEvents({ afterEventId: from.id });
    assert.deepEqual((await collect(call, 2)).map((e) => e.id), stored.map((e) => e.id));
    // Listening before recording: a flowing stream drops what arrives with no listener.
    const receiving = collect(call, 2);
    const live = [await record("payment_intent.cancelled"), await record()];
    const received = await receiving;
    assert.deepEqual(received.map((e) => [e.id, e.type, e.data?.id]), live.map((e) => [e.id, e.type, e.paymentIntentId]));
    call.cancel();

    const filtered = streamEvents({ afterEventId: from.id, types: ["payment_intent.cancelled"] });
    assert.deepEqual((await collect(filtered, 1)).map((e) => e.id), [live[0]!.id]);
    filtered.cancel();
  });

  it("answers an unknown afterEventId with NOT_FOUND in the trailers", async () => {
    const theirs = await record("payment_intent.created", "merchantB");
    const call = streamEvents({ afterEventId: theirs.id });
    const error = await new Promise<grpc.ServiceError>((resolve) => {
      call.on("data", () => assert.fail("no event may arrive"));
      call.on("error", resolve);
    });
    assert.equal(error.code, grpc.status.NOT_FOUND);
    assert.equal(error.details, `event ${theirs.id} not found`);
  });

  it("ends with DEADLINE_EXCEEDED when the client's deadline passes", async () => {
    const call = client.makeServerStreamRequest(
      "/payments.v2.EventService/StreamEvents",
      (message: MessageShape<typeof StreamEventsRequestSchema>) => Buffer.from(toBinary(StreamEventsRequestSchema, message)),
      (bytes: Buffer) => fromBinary(EventSchema, bytes),
      create(StreamEventsRequestSchema, {}),
      metadata(),
      { deadline: Date.now() + 300 },
    );
    const error = await new Promise<grpc.ServiceError>((resolve) => {
      call.on("data", () => {});
      call.on("error", resolve);
    });
    assert.equal(error.code, grpc.status.DEADLINE_EXCEEDED);
  });
});
