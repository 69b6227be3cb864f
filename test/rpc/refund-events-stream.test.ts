import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { RefundService } from "../../gen/payments/v2/refunds_pb.js";
import { paidIntent } from "../support/refund-client.js";
import { createRestClient, uniqueReference, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { rpcProtocols } from "./support/rpc-helpers.js";
import { take } from "./support/take-stream.js";

// Refund events as internal services follow them: StreamEvents, filtered to
// the refund types, over every protocol, with Event.refund set.
for (const protocol of rpcProtocols) {
  describe(`StreamEvents of refunds over ${protocol.name}`, () => {
    let server: TestServer;
    let rest: RestClient;
    let events: Client<typeof EventService>;
    let refunds: Client<typeof RefundService>;
    const as = (signal?: AbortSignal): CallOptions => ({ headers: { authorization: server.bearer() }, signal });
    before(async () => {
      server = await startTestServer();
      rest = createRestClient(server);
      const transport = protocol.transport(server.url, []);
      events = createClient(EventService, transport);
      refunds = createClient(RefundService, transport);
    });
    after(() => server.close());

    it("streams refund.created and refund.succeeded live, each with the refund and the intent's amountRefunded", async () => {
      const intent = await paidIntent(rest);
      // Resumed after the merchant's latest event, so nothing recorded from here on can be missed.
      const [latest] = (await events.listEvents({ pageSize: 1 }, as())).events;
      const aborter = new AbortController();
      const types = ["refund.created", "refund.succeeded", "refund.failed"];
      const stream = events.streamEvents({ afterEventId: latest!.id, types }, as(aborter.signal))[Symbol.asyncIterator]();
      const refund = await refunds.createRefund({ paymentIntentId: intent.id, amount: 2500n, clientReference: uniqueReference("st") }, as());
      const [created, succeeded] = await take(stream, 2);
      assert.deepEqual(
        [created!.type, created!.refund?.status, created!.refund?.amount, created!.data?.id, created!.data?.amountRefunded],
        ["refund.created", "pending", 2500n, intent.id, 2500n],
      );
      assert.deepEqual([succeeded!.type, succeeded!.refund], ["refund.succeeded", refund]);
      aborter.abort();
    });
  });
}
