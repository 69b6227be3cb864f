import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";

/** The mode cases of test/rest/modes.test.ts over gRPC, gRPC-Web and Connect: one pipeline, one answer. */
for (const protocol of rpcProtocols) {
  describe(`test and live modes over ${protocol.name}`, () => {
    let server: TestServer;
    let intents: Client<typeof PaymentIntentService>;
    let events: Client<typeof EventService>;
    const test = (signal?: AbortSignal): CallOptions => ({ headers: { authorization: `Bearer ${server.keys["merchantA"]}` }, signal });
    const live = (signal?: AbortSignal): CallOptions => ({ headers: { authorization: `Bearer ${server.liveKeys["merchantA"]}` }, signal });
    const body = (clientReference: string) => ({ amount: 50000n, customerEmail: "ada@example.com", clientReference });

    before(async () => {
      server = await startTestServer({ settings: { PAYSTACK_SECRET_KEY: "sk_live_7e57000000000000000000000000000000000001" } });
      const transport = protocol.transport(server.url, []);
      intents = createClient(PaymentIntentService, transport);
      events = createClient(EventService, transport);
    });
    after(() => server.close());

    it("stamps livemode and the mode in the id, and lists each mode apart", async () => {
      const t = await intents.createPaymentIntent(body("rpc-modes"), test());
      const l = await intents.createPaymentIntent(body("rpc-modes"), live());
      assert.deepEqual([t.livemode, l.livemode], [false, true]);
      assert.match(t.id, /^pi_test_/);
      assert.match(l.id, /^pi_live_/);
      assert.deepEqual((await intents.listPaymentIntents({ clientReference: "rpc-modes" }, live())).paymentIntents.map((i) => i.id), [l.id]);
      assert.deepEqual((await intents.listPaymentIntents({ clientReference: "rpc-modes" }, test())).paymentIntents.map((i) => i.id), [t.id]);
    });

    it("answers NotFound saying the object is in the other mode", async () => {
      const l = await intents.createPaymentIntent(body("rpc-other"), live());
      await expectConnectError(intents.getPaymentIntent({ id: l.id }, test()), Code.NotFound, /exists in live mode, but a test mode key was used/);
      const t = await intents.createPaymentIntent(body("rpc-other-test"), test());
      await expectConnectError(intents.deletePaymentIntent({ id: t.id }, live()), Code.NotFound, /exists in test mode, but a live mode key was used/);
    });

    it("streams only the key's mode", async () => {
      const aborter = new AbortController();
      const stream = events.streamEvents({}, live(aborter.signal))[Symbol.asyncIterator]();
      const first = stream.next();
      await new Promise((resolve) => setTimeout(resolve, 100));
      await intents.createPaymentIntent(body("rpc-stream-test"), test());
      const l = await intents.createPaymentIntent(body("rpc-stream-live"), live());
      const received = await Promise.race([first, new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no event")), 5000))]);
      assert.equal(received.value?.data?.id, l.id);
      assert.equal(received.value?.livemode, true);
      aborter.abort();
    });
  });
}
