import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { EventSchema, StreamEventsRequestSchema } from "../../gen/payments/v2/events_pb.js";
import { envelope as frame, splitEnvelopes } from "../hostile/support/wire.js";
import { createEventMaker } from "../support/event-maker.js";
import { startTestServer, type TestServer } from "../support/test-server.js";


/** Decodes gRPC-Web text as a server streams it: one separately padded base64 chunk per frame. */
function framesOfText(text: string): { flags: number; data: Buffer }[] {
  return splitEnvelopes(Buffer.concat(text.split(/(?<==)(?=[^=])/).map((chunk) => Buffer.from(chunk, "base64"))));
}

// The official grpc-web client speaks base64 text: a server stream arrives as
// one base64 chunk per frame, events first, then the trailer frame.
describe("StreamEvents over gRPC-Web text", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ caps: { streamPollIntervalMs: 50 } });
  });
  after(() => server.close());

  it("streams stored and live events as base64 frames, and ends with the trailer frame at the deadline", async () => {
    const maker = createEventMaker(server);
    // The intent the live event fails, created before the cursor.
    await maker.prepare(1);
    const from = await maker.created();
    const stored = await maker.settled(from.paymentIntentId, "successful");
    const body = frame(0, toBinary(StreamEventsRequestSchema, create(StreamEventsRequestSchema, { afterEventId: from.id }))).toString("base64");
    const text = await new Promise<string>((resolve, reject) => {
      const request = http.request(`${server.url}/payments.v2.EventService/StreamEvents`, {
        method: "POST",
        headers: {
          "content-type": "application/grpc-web-text",
          accept: "application/grpc-web-text",
          "x-grpc-web": "1",
          "grpc-timeout": "500m",
          authorization: server.bearer(),
        },
      });
      request.on("response", (res) => {
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers["content-type"], "application/grpc-web-text+proto");
        let received = "";
        let recordedLive = false;
        res.on("data", (chunk: Buffer) => {
          received += chunk.toString("latin1");
          if (!recordedLive) {
            recordedLive = true;
            void maker.record("payment_intent.failed");
          }
        });
        res.on("end", () => resolve(received));
      });
      request.on("error", reject);
      request.end(body);
    });
    const frames = framesOfText(text);
    const events = frames.filter((f) => f.flags === 0).map((f) => fromBinary(EventSchema, f.data));
    assert.deepEqual(events.map((e) => e.type), ["payment_intent.succeeded", "payment_intent.failed"]);
    assert.equal(events[0]!.id, stored.id);
    const trailer = frames.at(-1)!;
    assert.equal(trailer.flags, 0x80);
    assert.match(trailer.data.toString("latin1"), /^grpc-status: 4\r\ngrpc-message: the deadline passed before the call finished\r\n$/);
  });
});
