import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EventRecord } from "../../src/domain/event.js";
import { createEventNotifier } from "../../src/service/event-notifier.js";

const event = (id: string, merchantId: string): EventRecord => ({
  livemode: false,
  id,
  merchantId,
  type: "payment_intent.created",
  paymentIntentId: `pi_${id}`,
  createdAt: new Date(0),
  payload: new Uint8Array(),
  body: "{}",
});

describe("createEventNotifier", () => {
  it("tells each merchant's listeners of that merchant's events only, in one batch per notify", () => {
    const notifier = createEventNotifier();
    const seen: string[][] = [];
    const seenB: string[][] = [];
    notifier.subscribe("a", (events) => seen.push(events.map((e) => e.id)));
    notifier.subscribe("b", (events) => seenB.push(events.map((e) => e.id)));
    notifier.notify([event("1", "a"), event("2", "b"), event("3", "a")]);
    assert.deepEqual(seen, [["1", "3"]]);
    assert.deepEqual(seenB, [["2"]]);
  });

  it("stops telling a listener once unsubscribed, one subscription at a time", () => {
    const notifier = createEventNotifier();
    let calls = 0;
    const listener = () => void (calls += 1);
    const first = notifier.subscribe("a", listener);
    notifier.subscribe("a", listener);
    notifier.notify([event("1", "a")]);
    assert.equal(calls, 2);
    first();
    first();
    notifier.notify([event("2", "a")]);
    assert.equal(calls, 3);
  });

  it("reports a listener that throws and still tells the others", () => {
    const errors: unknown[] = [];
    const notifier = createEventNotifier({ onListenerError: (error) => errors.push(error) });
    let told = false;
    notifier.subscribe("a", () => {
      throw new Error("stream gone");
    });
    notifier.subscribe("a", () => void (told = true));
    assert.doesNotThrow(() => notifier.notify([event("1", "a")]));
    assert.equal(told, true);
    assert.deepEqual(
      errors.map((e) => (e as Error).message),
      ["stream gone"],
    );
  });

  it("tells a subscriber of every merchant each whole batch, once, until unsubscribed; an empty batch tells nobody", () => {
    const errors: unknown[] = [];
    const notifier = createEventNotifier({ onListenerError: (error) => errors.push(error) });
    const batches: string[][] = [];
    const stop = notifier.subscribeAll((events) => void batches.push(events.map((e) => e.id)));
    notifier.subscribeAll(() => {
      throw new Error("engine gone");
    });
    notifier.notify([event("1", "a"), event("2", "b")]);
    notifier.notify([]);
    stop();
    notifier.notify([event("3", "a")]);
    assert.deepEqual(batches, [["1", "2"]]);
    assert.deepEqual(
      errors.map((e) => (e as Error).message),
      ["engine gone", "engine gone"],
    );
  });

  it("passes a subscriber of every merchant the commit's count of deliveries, as the outbox gave it", () => {
    const notifier = createEventNotifier();
    const told: (number | undefined)[] = [];
    notifier.subscribeAll((_, deliveries) => void told.push(deliveries));
    notifier.notify([event("1", "a")], 0);
    notifier.notify([event("2", "a")], 2);
    notifier.notify([event("3", "a")]);
    assert.deepEqual(told, [0, 2, undefined]);
  });
});
