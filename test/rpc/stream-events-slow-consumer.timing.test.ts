import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { StreamEventsRequestSchema } from "../../gen/payments/v2/events_pb.js";
import { envelope } from "../hostile/support/wire.js";
import { createEventMaker } from "../support/event-maker.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

// A stream is written only as fast as its client reads: one that stops
// reading (here: a flow-control window of zero, so no byte can be sent) is
// cut after the write timeout instead of having the events buffered for it.
describe("StreamEvents to a client that does not read", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ settings: { WRITE_TIMEOUT_MS: "300" } });
  });
  after(() => server.close());

  it("cuts the stream at the write timeout, without a status, and the server goes on serving", async () => {
    const maker = createEventMaker(server);
    const first = await maker.created();
    // About 300 KB of events after the first: far more than a stream buffers before waiting for the client.
    for (let i = 0; i < 300; i++) await maker.created();
    const session = http2.connect(server.url, { settings: { initialWindowSize: 0 } });
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": "/payments.v2.EventService/StreamEvents",
        "content-type": "application/grpc",
        te: "trailers",
        authorization: server.bearer(),
      });
      stream.end(envelope(0, toBinary(StreamEventsRequestSchema, create(StreamEventsRequestSchema, { afterEventId: first.id }))));
      const started = Date.now();
      let trailers: http2.IncomingHttpHeaders | undefined;
      stream.on("trailers", (headers) => (trailers = headers));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the stream was still open after 5 s")), 5000);
        stream.on("error", () => {});
        stream.on("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      const elapsed = Date.now() - started;
      assert.equal(trailers, undefined, "cut, not ended with a status");
      assert.ok(elapsed >= 250 && elapsed < 3000, `cut after ${elapsed} ms`);
    } finally {
      session.destroy();
    }
    const res = await fetch(`${server.restUrl}/v2/events?pageSize=1`, { headers: { authorization: server.bearer() } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { events: unknown[] }).events.length, 1);
  });
});
