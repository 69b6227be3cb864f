import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createClient, type Client } from "@connectrpc/connect";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { createEventMaker } from "../support/event-maker.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { rpcProtocols } from "./support/rpc-helpers.js";

// An event stream may stay quiet far longer than any listener timeout: the
// request was read in full, so the request and idle timeouts of the
// connection do not apply while the response is open.
for (const protocol of rpcProtocols) {
  describe(`a quiet StreamEvents over ${protocol.name}`, () => {
    let server: TestServer;
    let events: Client<typeof EventService>;
    before(async () => {
      server = await startTestServer({
        limits: { requestTimeoutMs: 300, idleTimeoutMs: 300, headersTimeoutMs: 300 },
        caps: { streamPollIntervalMs: 50 },
      });
      events = createClient(EventService, protocol.transport(server.url, []));
    });
    after(() => server.close());

    it("stays open past the listener's timeouts and still delivers", async () => {
      const aborter = new AbortController();
      const stream = events.streamEvents({}, { headers: { authorization: server.bearer() }, signal: aborter.signal })[Symbol.asyncIterator]();
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const event = await createEventMaker(server).created();
      const next = await stream.next();
      assert.equal(next.done, false);
      assert.equal(next.value?.id, event.id);
      aborter.abort();
    });
  });
}
