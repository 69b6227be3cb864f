import { randomUUID } from "node:crypto";
import type { EventRecord, EventType } from "../../src/domain/event.js";
import { createRestClient } from "./rest-client.js";
import type { TestServer } from "./test-server.js";

/**
 * EventMaker records events the way the service does: it changes intents
 * (a create through the API, a final status through the intent store port
 * the checkout and the expiry use), and the server's stores record each
 * change's event through the real outbox, its deliveries included. It
 * answers with the event as the outbox committed it.
 */
export interface EventMaker {
  /** Creates an intent of the merchant (default merchantA): its payment_intent.created. */
  created(merchantId?: string): Promise<EventRecord>;
  /** Moves a pending intent to a final status: payment_intent.succeeded, .failed or .expired. */
  settled(paymentIntentId: string, to: "successful" | "failed" | "expired", merchantId?: string): Promise<EventRecord>;
  /** Deletes an intent through the API: its payment_intent.cancelled. */
  cancelled(paymentIntentId: string, merchantId?: string): Promise<EventRecord>;
  /** Creates count pending intents of the merchant now, for record() to settle later. */
  prepare(count: number, merchantId?: string): Promise<void>;
  /**
   * An event of the type: payment_intent.created creates an intent; a final
   * type settles one of the intents prepare() made (whose created event is
   * already behind), so each call records exactly one event.
   */
  record(type?: EventType, merchantId?: string): Promise<EventRecord>;
}

const finalStatusOf: Partial<Record<EventType, "successful" | "failed" | "expired">> = {
  "payment_intent.succeeded": "successful",
  "payment_intent.failed": "failed",
  "payment_intent.expired": "expired",
};

export function createEventMaker(server: TestServer): EventMaker {
  const client = createRestClient(server);
  const { notifier } = server.service.webhooks;
  /** Runs change and answers with the first event the merchant's commits carry for which it returns true. */
  const committed = async (merchantId: string, change: () => Promise<string>): Promise<EventRecord> => {
    const seen: EventRecord[] = [];
    const stop = notifier.subscribe(merchantId, (events) => void seen.push(...events));
    try {
      const paymentIntentId = await change();
      const event = seen.find((e) => e.paymentIntentId === paymentIntentId);
      if (!event) throw new Error(`no event was committed for ${paymentIntentId}`);
      return event;
    } finally {
      stop();
    }
  };
  const prepared = new Map<string, string[]>();
  const maker: EventMaker = {
    async prepare(count, merchantId = "merchantA") {
      const pool = prepared.get(merchantId) ?? [];
      prepared.set(merchantId, pool);
      for (let i = 0; i < count; i++) pool.push((await maker.created(merchantId)).paymentIntentId);
    },
    record(type = "payment_intent.created", merchantId = "merchantA") {
      if (type === "payment_intent.created") return maker.created(merchantId);
      const paymentIntentId = prepared.get(merchantId)?.shift();
      if (!paymentIntentId) throw new Error(`record(${type}): prepare() more intents of ${merchantId} first`);
      if (type === "payment_intent.cancelled") return maker.cancelled(paymentIntentId, merchantId);
      const to = finalStatusOf[type];
      if (!to) throw new Error(`record(${type}): not a change EventMaker makes`);
      return maker.settled(paymentIntentId, to, merchantId);
    },
    created: (merchantId = "merchantA") =>
      committed(merchantId, async () => {
        const res = await client.createIntent({ amount: 50000, customerEmail: "ada@example.com", clientReference: `order-${randomUUID()}` }, merchantId);
        if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
        return (JSON.parse(res.text) as { id: string }).id;
      }),
    settled: (paymentIntentId, to, merchantId = "merchantA") =>
      committed(merchantId, async () => {
        const at = server.service.clock.now();
        const changed = await server.intents.transition(merchantId, paymentIntentId, {
          from: "pending",
          to,
          at,
          ...(to === "successful" && { transaction: `txn_test_${randomUUID()}` }),
        });
        if (!changed) throw new Error(`${paymentIntentId} was not pending`);
        return paymentIntentId;
      }),
    cancelled: (paymentIntentId, merchantId = "merchantA") =>
      committed(merchantId, async () => {
        const res = await client.deleteIntent(paymentIntentId, merchantId);
        if (res.status !== 200) throw new Error(`delete answered ${res.status}: ${res.text}`);
        return paymentIntentId;
      }),
  };
  return maker;
}
