import { randomBytes } from "node:crypto";
import { EventSchema } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentListItemSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import type { EventRecord } from "../../src/domain/event.js";
import type { PaymentIntentRecord } from "../../src/domain/payment-intent.js";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { createRestEncoders } from "../../src/protocols/rest/encode-json.js";
import { createEventOutbox } from "../../src/service/event-outbox.js";
import { createPaymentIntentPresenter } from "../../src/service/payment-intent-presenter.js";
import { createPaymentMethodCatalogue } from "../../src/service/payment-method-catalogue.js";
import type { EventOutbox, EventStore } from "../../src/store/event-store.js";
import type { IntentWithAccount, PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import type { SettlementAccountStore } from "../../src/store/settlement-account-store.js";
import type { NewWebhookEndpoint, WebhookEndpointStore } from "../../src/store/webhook-endpoint-store.js";
import type { DeliveryQueue } from "../../src/store/delivery-queue.js";
import { contractMerchants } from "./contract-records.js";

/**
 * What the event, outbox and webhook endpoint contract suites share. Each
 * runs against every store kind: a harness factory builds fresh, empty stores
 * of one kind (the contract merchants existing, where merchants are rows)
 * whose intent store records events through the outbox it is given.
 */

/** The stores under test, sharing one storage: intents' changes record events and deliveries the others read. */
export interface EventStoresHarness {
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
  events: EventStore;
  endpoints: WebhookEndpointStore;
  /** The delivery queue of the same storage (claims show what would be sent). */
  queue: DeliveryQueue;
  close(): Promise<void>;
}

/** MakeEventStores builds empty stores whose intent store records events through outbox. */
export type MakeEventStores = (outbox: EventOutbox) => Promise<EventStoresHarness>;

/** ContractOutbox is the service's real outbox with what a test needs to check it. */
export interface ContractOutbox {
  outbox: EventOutbox;
  /** Every committed() call, in order. */
  commits: EventRecord[][];
  /** Each committed() call's count of deliveries, in the same order. */
  committedDeliveries: (number | undefined)[];
  /** The REST JSON of the GET shape of an intent judged at a time: what an event's data must be. */
  getShape(view: IntentWithAccount, at: Date): unknown;
}

/** createContractOutbox: the renderer the service uses (presenter, REST encoder, fresh UUIDv7 ids). */
export function createContractOutbox(): ContractOutbox {
  const catalogue = createPaymentMethodCatalogue(["paystack"]);
  const presenter = createPaymentIntentPresenter({ publicUrl: "https://pay.example.com", catalogue });
  const encoders = createRestEncoders();
  const commits: EventRecord[][] = [];
  const committedDeliveries: (number | undefined)[] = [];
  const outbox = createEventOutbox({
    presenter,
    ids: createIdGenerator(createSystemClock()),
    encodeJson: encoders.encoderFor(EventSchema),
    onCommitted: (events, deliveries) => {
      commits.push([...events]);
      committedDeliveries.push(deliveries);
    },
  });
  const encodeItem = encoders.encoderFor(PaymentIntentListItemSchema);
  return {
    outbox,
    commits,
    committedDeliveries,
    getShape: (view, at) => JSON.parse(encodeItem(presenter.toListItem(view.intent, view.account, at))),
  };
}

const endpointIds = createIdGenerator(createSystemClock());

/** An endpoint to register: of merchant A, every type, a fresh id and secret unless overridden. */
export function newEndpoint(overrides: Partial<NewWebhookEndpoint> = {}): NewWebhookEndpoint {
  return {
    livemode: false,
    id: endpointIds.webhookEndpointId(false),
    merchantId: contractMerchants.a,
    url: "https://hooks.example.com/payments",
    eventTypes: [],
    description: null,
    secret: `whsec_${randomBytes(32).toString("base64")}`,
    createdAt: new Date("2024-05-01T09:00:00.000Z"),
    ...overrides,
  };
}

/** A delivery id generator for redeliveries. */
export const deliveryId = () => endpointIds.webhookDeliveryId();

/** Every event after cursor from (a headCursor taken before they were recorded), in commit order, read in pages. */
export async function readAll(events: EventStore, merchantId: string, from: string, pageSize = 100): Promise<EventRecord[]> {
  const all: EventRecord[] = [];
  let cursor = from;
  for (;;) {
    const read = await events.readAfter(merchantId, cursor, pageSize);
    all.push(...read.events);
    if (read.events.length === 0) return all;
    cursor = read.cursor;
  }
}

/** Far in the future: every delivery is due. */
export const farFuture = new Date("2100-01-01T00:00:00.000Z");

/** A successful transition's fields for a record. */
export function successOf(record: PaymentIntentRecord, at: Date) {
  return { from: "pending" as const, to: "successful" as const, at, transaction: `txn_${record.id}` };
}
