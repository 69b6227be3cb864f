import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { EventSchema, StreamEventsRequestSchema } from "../../gen/payments/v2/events_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const piId = "pi_019aa3c4-0f7d-7e21-8a64-93b25c1d7e08";

/** A gRPC-Web frame: flags, 4-byte big-endian length, data (grpc/doc/PROTOCOL-WEB.md). */
function frame(flags: number, data: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(data.byteLength, 1);
  return Buffer.concat([head, data]);
}

/** Decodes gRPC-Web text as a server streams it: one separately padded base64 chunk per frame. */
function framesOfText(text: string): { flags: number; data: Buffer }[] {
  const bytes = Buffer.concat(text.split(/(?<==)(?=[^=])/).map((chunk) => Buffer.from(chunk, "base64")));
  const frames: { flags: number; data: Buffer }[] = [];
  for (let at = 0; at + 5 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at + 1);
    frames.push({ flags: bytes[at]!, data: bytes.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return frames;
}

// The official grpc-web client speaks base64 text: a server stream arrives as
// one base64 chunk per frame, events first, then the trailer frame.
describe("StreamEvents over gRPC-Web text", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ webhooks: { streamPollIntervalMs: 50 } });
  });
  after(() => server.close());

  it("streams stored and live events as base64 frames, and ends with the trailer frame at the deadline", async () => {
    const from = server.webhooks.record("merchantA", "payment_intent.created", piId);
    const stored = server.webhooks.record("merchantA", "payment_intent.succeeded", piId);
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
            server.webhooks.record("merchantA", "payment_intent.failed", piId);
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
    assert.match(trailer.data.toString("latin1"), /^grpc-status: 4\r\ngrpc-message: the deadline passed\r\n$/);
  });
});
