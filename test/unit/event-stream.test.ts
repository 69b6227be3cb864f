import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { EventSchema, StreamEventsRequestSchema, type Event } from "../../gen/payments/v2/events_pb.js";
import type { EventRecord } from "../../src/domain/event.js";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { createRestEncoders } from "../../src/protocols/rest/encode-json.js";
import { createEventNotifier } from "../../src/service/event-notifier.js";
import { createEventOutbox } from "../../src/service/event-outbox.js";
import { createEventStreams } from "../../src/service/event-stream.js";
import { createPaymentIntentPresenter } from "../../src/service/payment-intent-presenter.js";
import { createPaymentMethodCatalogue } from "../../src/service/payment-method-catalogue.js";
import { createMemoryStores } from "../../src/store/memory/create-memory-stores.js";
import { intentId, intentRecord } from "../store/contract-records.js";

/**
 * The memory stores with the service's outbox and notifier: an intent
 * created or paid through the intent store records its event, as in the
 * service, and the notifier is told of it.
 */
function recordingStores() {
  const notifier = createEventNotifier();
  const catalogue = createPaymentMethodCatalogue(["paystack"]);
  const outbox = createEventOutbox({
    presenter: createPaymentIntentPresenter({ publicUrl: "https://pay.example.com", catalogue }),
    ids: createIdGenerator(createSystemClock()),
    encodeJson: createRestEncoders().encoderFor(EventSchema),
    onCommitted: (events) => notifier.notify(events),
  });
  const stores = createMemoryStores({ outbox });
  let count = 0;
  /** The event the change commits for the merchant. */
  const committed = async (merchantId: string, change: () => Promise<unknown>): Promise<EventRecord> => {
    const seen: EventRecord[] = [];
    const stop = notifier.subscribe(merchantId, (events) => void seen.push(...events));
    await change();
    stop();
    assert.equal(seen.length, 1);
    return seen[0]!;
  };
  return {
    events: stores.events,
    notifier,
    /** Creates an intent of the merchant: its payment_intent.created. */
    created(merchantId: string) {
      count += 1;
      const record = intentRecord({ id: intentId(count), merchantId, clientReference: `order-${count}`, createdAt: new Date() });
      return committed(merchantId, () => stores.intents.insert(record));
    },
    /** Pays the intent: its payment_intent.succeeded. */
    succeeded(merchantId: string, paymentIntentId: string) {
      return committed(merchantId, () => stores.intents.transition(merchantId, paymentIntentId, { from: "pending", to: "successful", at: new Date(), transaction: "txn_1" }));
    },
  };
}
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
    const stores = recordingStores();
    const streams = createEventStreams({ events: stores.events, pollIntervalMs: 20 });
    const aborter = new AbortController();
    const first = await stores.created("m");
    const stream = streams.stream("m", request({ afterEventId: first.id }), aborter.signal, false);
    const pending = next(stream);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const later = await stores.succeeded("m", first.paymentIntentId);
    assert.equal((await pending).id, later.id);
    aborter.abort();
    assert.equal((await stream.next()).done, true);
  });

  it("ends at once when the client goes away or the server closes, and frees the merchant's slot", async () => {
    const stores = recordingStores();
    const closing = new AbortController();
    const pollIntervalMs = 60_000;
    const streams = createEventStreams({ events: stores.events, notifier: stores.notifier, pollIntervalMs, maxPerMerchant: 1, closing: closing.signal });
    const client = new AbortController();
    const one = streams.stream("m", request(), client.signal, false);
    const waiting = one.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await assert.rejects(streams.stream("m", request(), new AbortController().signal, false).next(), (error: unknown) => {
      assert.ok(error instanceof ConnectError);
      assert.equal(error.code, Code.ResourceExhausted);
      return true;
    });
    const startedAt = Date.now();
    client.abort();
    assert.equal((await waiting).done, true);
    assert.ok(Date.now() - startedAt < pollIntervalMs / 2, "the stream waited for its poll interval");

    const two = streams.stream("m", request(), new AbortController().signal, false);
    const waitingTwo = two.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    closing.abort();
    assert.equal((await waitingTwo).done, true);
  });

  // Bad types never reach the stream: the field's rules refuse them in the pipeline (test/rules).
  it("refuses an unknown cursor before it takes a slot", async () => {
    const stores = recordingStores();
    const streams = createEventStreams({ events: stores.events, notifier: stores.notifier, maxPerMerchant: 1 });
    const signal = new AbortController().signal;
    await assert.rejects(streams.stream("m", request({ afterEventId: "evt_x" }), signal, false).next(), /event evt_x not found/);
    const aborter = new AbortController();
    const open = streams.stream("m", request(), aborter.signal, false);
    const pending = open.next();
    const event = await stores.created("m");
    assert.equal(((await pending).value as Event).id, event.id);
    aborter.abort();
  });
});
