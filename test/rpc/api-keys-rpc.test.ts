import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { ApiKeyService } from "../../gen/payments/v2/api_keys_pb.js";
import { EventService, type Event } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { startTestServer, testStoreKind, type TestServer } from "../support/test-server.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";

/** How the stream ended within timeoutMs, past its events (the key events this suite records reach the streams too). */
async function endOf(stream: AsyncIterator<Event>, timeoutMs: number): Promise<"end" | ConnectError | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
  try {
    for (;;) {
      const next = await Promise.race([stream.next(), deadline]);
      if (next === "timeout") return next;
      if (next.done) return "end";
    }
  } catch (error) {
    assert.ok(error instanceof ConnectError, String(error));
    return error;
  } finally {
    clearTimeout(timer);
  }
}

/** The key life of test/rest/api-keys.test.ts over gRPC, gRPC-Web and Connect: one pipeline, one answer. */
for (const protocol of rpcProtocols) {
  describe(`ApiKeyService over ${protocol.name} (${testStoreKind} store)`, () => {
    let server: TestServer;
    let clock: ManualClock;
    let keys: Client<typeof ApiKeyService>;
    let intents: Client<typeof PaymentIntentService>;
    let events: Client<typeof EventService>;
    const as = (key: string, signal?: AbortSignal): CallOptions => ({ headers: { authorization: `Bearer ${key}` }, signal });
    const a = () => as(server.keys["merchantA"]!);
    const canRead = async (key: string) => {
      try {
        await intents.listPaymentIntents({}, as(key));
        return true;
      } catch (error) {
        assert.ok(error instanceof ConnectError && error.code === Code.Unauthenticated, String(error));
        return false;
      }
    };

    before(async () => {
      clock = createManualClock("2026-12-05T16:00:00.000Z");
      server = await startTestServer({ clock, caps: { keyRecheckMs: 100, streamPollIntervalMs: 50 } });
      const transport = protocol.transport(server.url, []);
      keys = createClient(ApiKeyService, transport);
      intents = createClient(PaymentIntentService, transport);
      events = createClient(EventService, transport);
    });
    after(() => server.close());

    it("creates, lists without the secret, rolls with a grace and revokes", async () => {
      const made = await keys.createApiKey({ name: "rpc", scopes: ["payment_intents:read"], allowedCidrs: ["127.0.0.0/8"] }, a());
      assert.match(made.secret, /^sk_test_[0-9A-Za-z]{36}$/);
      assert.deepEqual([made.mode, made.name, made.scopes, made.allowedCidrs, made.last4], ["test", "rpc", ["payment_intents:read"], ["127.0.0.0/8"], made.secret.slice(-4)]);
      assert.equal(await canRead(made.secret), true);
      const listed = (await keys.listApiKeys({}, a())).apiKeys.find((k) => k.id === made.id);
      assert.ok(listed);
      assert.equal("secret" in listed, false);
      const rolled = await keys.rollApiKey({ id: made.id, graceSeconds: 30 }, a());
      assert.deepEqual([await canRead(made.secret), await canRead(rolled.secret)], [true, true]);
      clock.advance(30_000);
      assert.deepEqual([await canRead(made.secret), await canRead(rolled.secret)], [false, true]);
      assert.deepEqual(await keys.revokeApiKey({ id: rolled.id }, a()), { $typeName: "payments.v2.RevokeApiKeyResponse", status: 200, title: "OK", message: `API key ${rolled.id} revoked` });
      assert.equal(await canRead(rolled.secret), false);
      await expectConnectError(keys.revokeApiKey({ id: rolled.id }, a()), Code.NotFound, /^API key \S+ not found$/);
    });

    it("records api_key.created, .rolled and .revoked events, with the key and never its secret", async () => {
      const made = await keys.createApiKey({ name: "evented" }, a());
      const rolled = await keys.rollApiKey({ id: made.id, graceSeconds: 5 }, a());
      await keys.revokeApiKey({ id: rolled.id }, a());
      const listed = (await events.listEvents({ pageSize: 100 }, a())).events.filter((e) => e.apiKey && [made.id, rolled.id].includes(e.apiKey.id));
      assert.deepEqual(
        listed.map((e) => [e.type, e.apiKey!.id, e.data, e.livemode]),
        [
          ["api_key.revoked", rolled.id, undefined, false],
          ["api_key.rolled", made.id, undefined, false],
          ["api_key.created", made.id, undefined, false],
        ],
      );
      assert.equal(listed[2]!.apiKey!.name, "evented");
      assert.ok(!JSON.stringify(listed, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)).includes(made.secret));
    });

    it("answers PermissionDenied naming the missing scope, and refuses an escalation", async () => {
      const reader = (await keys.createApiKey({ name: "reader", scopes: ["payment_intents:read", "api_keys:write"] }, a())).secret;
      await intents.listPaymentIntents({}, as(reader));
      await expectConnectError(
        intents.createPaymentIntent({ amount: 100n, customerEmail: "a@example.com", clientReference: "rpc-scope" }, as(reader)),
        Code.PermissionDenied,
        /^this API key lacks the scope payment_intents:write$/,
      );
      await expectConnectError(events.listEvents({}, as(reader)), Code.PermissionDenied, /^this API key lacks the scope events:read$/);
      await expectConnectError(keys.createApiKey({ name: "wider", scopes: ["refunds:write"] }, as(reader)), Code.PermissionDenied, /cannot grant the scope refunds:write/);
      await expectConnectError(keys.createApiKey({ name: "live", mode: "live" }, a()), Code.PermissionDenied, /a test mode key cannot make live mode keys/);
    });

    it("refuses a key outside its networks (PermissionDenied) and an expired key (Unauthenticated)", async () => {
      const office = (await keys.createApiKey({ name: "office", allowedCidrs: ["198.51.100.0/24"] }, a())).secret;
      await expectConnectError(intents.listPaymentIntents({}, as(office)), Code.PermissionDenied, /not accepted from this client's address/);
      const expiresAt = timestampFromDate(new Date(clock.now().getTime() + 60_000));
      const brief = (await keys.createApiKey({ name: "brief", expiresAt }, a())).secret;
      assert.equal(await canRead(brief), true);
      clock.advance(60_000);
      assert.equal(await canRead(brief), false);
    });

    it("ends the open StreamEvents of a key rolled with no grace, of a revoked key and of an expired key", async () => {
      const expiresAt = timestampFromDate(new Date(clock.now().getTime() + 3_600_000));
      const [rolled, revoked, expiring] = await Promise.all(
        [{ name: "rolled" }, { name: "revoked" }, { name: "expiring", expiresAt }].map((body) => keys.createApiKey(body, a())),
      );
      const aborter = new AbortController();
      const open = (secret: string) => events.streamEvents({}, as(secret, aborter.signal))[Symbol.asyncIterator]();
      const streams = [open(rolled!.secret), open(revoked!.secret), open(expiring!.secret)];
      const outcomes = streams.map((stream) => endOf(stream, 5000));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await keys.rollApiKey({ id: rolled!.id }, a());
      await keys.revokeApiKey({ id: revoked!.id }, a());
      clock.advance(3_600_000);
      for (const outcome of await Promise.all(outcomes)) {
        assert.ok(outcome instanceof ConnectError, `the stream ended with ${String(outcome)}`);
        assert.equal(outcome.code, Code.Unauthenticated);
      }
      aborter.abort();
    });
  });
}
