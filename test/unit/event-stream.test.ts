import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { StreamEventsRequestSchema, type Event } from "../../gen/payments/v2/events_pb.js";
import { createEventStreams } from "../../src/service/event-stream.js";
import { createFakeWebhookStores } from "../support/fake-webhook-stores.js";

const piId = "pi_019aa3c4-0f7d-7e21-8a64-93b25c1d7e08";
const request = (init: { afterEventId?: string; types?: string[] } = {}) => create(StreamEventsRequestSchema, init);

/** next reads one event or fails after timeoutMs. */
async function next(stream: AsyncGenerator<Event>, timeoutMs = 2000): Promise<Event> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    stream.next(),
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (result === "timeout") return assert.fail("no event arrived");
  assert.equal(result.done, false);
  return result.value as Event;
}

describe("createEventStreams", () => {
  it("finds events recorded without a notification (another instance) by polling", async () => {
    const stores = createFakeWebhookStores();
    const streams = createEventStreams({ events: stores.events, pollIntervalMs: 20 });
    const aborter = new AbortController();
    const first = stores.record("m", "payment_intent.created", piId);
    const stream = streams.stream("m", request({ afterEventId: first.id }), aborter.signal);
    const pending = next(stream);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const later = stores.record("m", "payment_intent.succeeded", piId);
    assert.equal((await pending).id, later.id);
    aborter.abort();
    assert.equal((await stream.next()).done, true);
  });

  it("ends at once when the client goes away or the server closes, and frees the merchant's slot", async () => {
    const stores = createFakeWebhookStores();
    const closing = new AbortController();
    const streams = createEventStreams({ events: stores.events, notifier: stores.notifier, pollIntervalMs: 60_000, maxPerMerchant: 1, closing: closing.signal });
    const client = new AbortController();
    const one = streams.stream("m", request(), client.signal);
    const waiting = one.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await assert.rejects(streams.stream("m", request(), new AbortController().signal).next(), (error: unknown) => {
      assert.ok(error instanceof ConnectError);
      assert.equal(error.code, Code.ResourceExhausted);
      return true;
    });
    const startedAt = Date.now();
    client.abort();
    assert.equal((await waiting).done, true);
    assert.ok(Date.now() - startedAt < 1000, "the stream did not wait for its poll interval");

    const two = streams.stream("m", request(), new AbortController().signal);
    const waitingTwo = two.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    closing.abort();
    assert.equal((await waitingTwo).done, true);
  });

  // Bad types never reach the stream: the field's rules refuse them in the pipeline (test/rules).
  it("refuses an unknown cursor before it takes a slot", async () => {
    const stores = createFakeWebhookStores();
    const streams = createEventStreams({ events: stores.events, maxPerMerchant: 1 });
    const signal = new AbortController().signal;
    await assert.rejects(streams.stream("m", request({ afterEventId: "evt_x" }), signal).next(), /event evt_x not found/);
    const aborter = new AbortController();
    const open = streams.stream("m", request(), aborter.signal);
    const pending = open.next();
    const event = stores.record("m", "payment_intent.created", piId);
    assert.equal(((await pending).value as Event).id, event.id);
    aborter.abort();
  });
});
