import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { EventService, type Event } from "../../gen/payments/v2/events_pb.js";
import type { EventRecord, EventType } from "../../src/domain/event.js";
import { createEventMaker, type EventMaker } from "../support/event-maker.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { rpcProtocols } from "./support/rpc-helpers.js";
import { take } from "./support/take-stream.js";



/** failureOf reads a stream that must fail and returns its error. */
async function failureOf(stream: AsyncIterable<Event>): Promise<ConnectError> {
  try {
    for await (const _ of stream) assert.fail("the stream sent an event");
  } catch (error) {
    assert.ok(error instanceof ConnectError, String(error));
    return error;
  }
  return assert.fail("the stream ended without an error");
}

// StreamEvents is server streaming: Connect (connect+json, connect+proto),
// gRPC-Web and gRPC carry it; each protocol gets its own server.
for (const protocol of rpcProtocols) {
  describe(`StreamEvents over ${protocol.name}`, () => {
    let server: TestServer;
    let events: Client<typeof EventService>;
    const as = (merchant = "merchantA", signal?: AbortSignal): CallOptions => ({ headers: { authorization: server.bearer(merchant) }, signal });
    let maker: EventMaker;
    /** Records one event of the type through the service's own stores (see EventMaker). */
    const record = (type?: EventType, merchant?: string): Promise<EventRecord> => maker.record(type, merchant);

    before(async () => {
      server = await startTestServer({ caps: { maxStreamsPerMerchant: 2, streamPollIntervalMs: 50 } });
      maker = createEventMaker(server);
      // Intents the final events settle: their created events come before every test's own.
      await maker.prepare(6);
      events = createClient(EventService, protocol.transport(server.url, []));
    });
    after(() => server.close());

    it("resumes after an event: the stored ones in order, then live ones", async () => {
      const stored = [await record(), await record("payment_intent.succeeded"), await record()];
      await record("payment_intent.created", "merchantB");
      const aborter = new AbortController();
      const stream = events.streamEvents({ afterEventId: stored[0]!.id }, as("merchantA", aborter.signal))[Symbol.asyncIterator]();
      assert.deepEqual((await take(stream, 2)).map((e) => e.id), [stored[1]!.id, stored[2]!.id]);
      const live = await record("payment_intent.failed");
      const [received] = await take(stream, 1);
      assert.equal(received!.id, live.id);
      assert.equal(received!.type, "payment_intent.failed");
      assert.equal(received!.data?.id, live.paymentIntentId);
      aborter.abort();
    });

    it("without afterEventId sends only events recorded from then on", async () => {
      await record();
      const aborter = new AbortController();
      const stream = events.streamEvents({}, as("merchantA", aborter.signal))[Symbol.asyncIterator]();
      // Give the server the time to take its starting position before recording.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const live = await record();
      assert.deepEqual((await take(stream, 1)).map((e) => e.id), [live.id]);
      aborter.abort();
    });

    it("sends only the types asked for", async () => {
      const from = await record();
      await record();
      const wanted = await record("payment_intent.succeeded");
      const aborter = new AbortController();
      const stream = events.streamEvents({ afterEventId: from.id, types: ["payment_intent.succeeded", "payment_intent.expired"] }, as("merchantA", aborter.signal))[Symbol.asyncIterator]();
      assert.deepEqual((await take(stream, 1)).map((e) => e.id), [wanted.id]);
      await record();
      const expired = await record("payment_intent.expired");
      assert.deepEqual((await take(stream, 1)).map((e) => e.id), [expired.id]);
      aborter.abort();
    });

    it("hands over from stored to live events without a gap or a duplicate", async () => {
      const from = await record();
      const expected: string[] = [];
      for (let i = 0; i < 120; i++) expected.push((await record()).id);
      const aborter = new AbortController();
      const stream = events.streamEvents({ afterEventId: from.id }, as("merchantA", aborter.signal))[Symbol.asyncIterator]();
      const reading = take(stream, 240, 10_000);
      for (let i = 0; i < 120; i++) {
        expected.push((await record()).id);
        if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.deepEqual((await reading).map((e) => e.id), expected);
      aborter.abort();
    });

    it("refuses an unknown or another merchant's afterEventId, a bad type, and a missing key", async () => {
      const theirs = await record("payment_intent.created", "merchantB");
      let error = await failureOf(events.streamEvents({ afterEventId: theirs.id }, as()));
      assert.deepEqual([error.code, error.rawMessage], [Code.NotFound, `event ${theirs.id} not found`]);
      error = await failureOf(events.streamEvents({ afterEventId: "evt_nope" }, as()));
      assert.equal(error.code, Code.NotFound);
      error = await failureOf(events.streamEvents({ types: ["payment_intent.refunded"] }, as()));
      assert.equal(error.code, Code.InvalidArgument);
      assert.match(error.rawMessage, /^types\[0\] must be one of /);
      error = await failureOf(events.streamEvents({}));
      assert.equal(error.code, Code.Unauthenticated);
    });

    it("caps the open streams of a merchant, and frees a slot when a client goes away", async () => {
      const first = new AbortController();
      const second = new AbortController();
      const from = await record();
      const open = [first, second].map((aborter) => events.streamEvents({ afterEventId: from.id }, as("merchantA", aborter.signal))[Symbol.asyncIterator]());
      const marker = await record();
      for (const stream of open) assert.deepEqual((await take(stream, 1)).map((e) => e.id), [marker.id]);
      const error = await failureOf(events.streamEvents({ afterEventId: from.id }, as()));
      assert.deepEqual([error.code, error.rawMessage], [Code.ResourceExhausted, "at most 2 event streams may be open per merchant"]);
      // Another merchant has its own allowance.
      const theirs = new AbortController();
      const other = events.streamEvents({}, as("merchantB", theirs.signal))[Symbol.asyncIterator]();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const forB = await record("payment_intent.created", "merchantB");
      assert.deepEqual((await take(other, 1)).map((e) => e.id), [forB.id]);
      theirs.abort();
      first.abort();
      // The server learns of the abort when the connection or stream closes.
      let third: AsyncIterator<Event> | undefined;
      const thirdAborter = new AbortController();
      for (let attempt = 0; attempt < 50 && !third; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const candidate = events.streamEvents({ afterEventId: from.id }, as("merchantA", thirdAborter.signal))[Symbol.asyncIterator]();
        try {
          assert.deepEqual((await take(candidate, 1)).map((e) => e.id), [marker.id]);
          third = candidate;
        } catch (error) {
          if (!(error instanceof ConnectError && error.code === Code.ResourceExhausted)) throw error;
        }
      }
      assert.ok(third, "a slot was freed");
      second.abort();
      thirdAborter.abort();
    });

    it("ends open streams cleanly when the server shuts down", async () => {
      // After the cap test, wait for its streams to be released.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stream = events.streamEvents({}, as())[Symbol.asyncIterator]();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const live = await record();
      assert.deepEqual((await take(stream, 1)).map((e) => e.id), [live.id]);
      const closed = server.close();
      const end = await stream.next();
      assert.equal(end.done, true);
      await closed;
    });
  });
}

describe("StreamEvents over Connect's unary content types", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it("is InvalidArgument: a server stream is enveloped, application/connect+json or +proto", async () => {
    const res = await fetch(`${server.url}/payments.v2.EventService/StreamEvents`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: server.bearer() },
      body: "{}",
    });
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      code: "invalid_argument",
      message: "StreamEvents streams; use application/connect+json or application/connect+proto",
    });
  });
});
