import { createMemoryDeliveryQueue, type MemoryDeliveryQueue } from "./memory-delivery-queue.js";
import type { EventOutbox, EventStore } from "../event-store.js";
import type { PaymentIntentStore } from "../payment-intent-store.js";
import type { RefundStore } from "../refund-store.js";
import type { SettlementAccountStore } from "../settlement-account-store.js";
import type { WebhookEndpointStore } from "../webhook-endpoint-store.js";
import { createMemoryAccountTable } from "./memory-account-table.js";
import { createMemoryEndpointTable } from "./memory-endpoint-table.js";
import { createMemoryEventStore } from "./memory-event-store.js";
import { createMemoryEventTable } from "./memory-event-table.js";
import { createMemoryEventRecorder } from "./memory-event-recorder.js";
import { createMemoryPaymentIntentStore } from "./memory-payment-intent-store.js";
import { createMemoryRefundStore } from "./memory-refund-store.js";
import { createMemorySettlementAccountStore } from "./memory-settlement-account-store.js";
import { createMemoryWebhookEndpointStore } from "./memory-webhook-endpoint-store.js";
import { createMemoryApiKeyStore, type MemoryApiKeyStore } from "./memory-api-key-store.js";
import { createSystemClock, type Clock } from "../../lib/clock.js";
import { randomUUID } from "node:crypto";

/** The in-memory data stores, sharing one set of settlement accounts and one set of events, endpoints and deliveries. */
export interface MemoryStores {
  intents: PaymentIntentStore;
  /** Refunds of those intents, which change their amountRefunded. */
  refunds: RefundStore;
  accounts: SettlementAccountStore;
  events: EventStore;
  endpoints: WebhookEndpointStore;
  /** The deliveries the endpoints show and the delivery engine sends. */
  deliveryQueue: MemoryDeliveryQueue;
  /** API keys, whose key API changes record api_key.* events in the same tables. */
  apiKeys: MemoryApiKeyStore;
}

export interface MemoryStoresOptions {
  /** Records an event for every change of an intent; without it none is recorded. */
  outbox?: EventOutbox;
  /** The API keys' clock (expiry, lastUsedAt); default the system clock. */
  clock?: Clock;
  /** New API key ids; default "key_" + a random UUID. */
  newKeyId?: () => string;
}

/**
 * createMemoryStores builds the in-memory stores over shared tables, as one
 * PostgreSQL database is: a list item shows the account registered through
 * the account store, and an intent's change records its event and the
 * deliveries to the endpoints registered through the endpoint store.
 */
export function createMemoryStores(options: MemoryStoresOptions = {}): MemoryStores {
  const table = createMemoryAccountTable();
  const webhooks = { events: createMemoryEventTable(), endpoints: createMemoryEndpointTable(), queue: createMemoryDeliveryQueue() };
  const intents = createMemoryPaymentIntentStore({ accounts: table, outbox: options.outbox, webhooks });
  return {
    intents,
    refunds: createMemoryRefundStore({ intents: intents.access, recorder: options.outbox && createMemoryEventRecorder(options.outbox, webhooks) }),
    accounts: createMemorySettlementAccountStore(table),
    events: createMemoryEventStore(webhooks.events, webhooks.queue),
    endpoints: createMemoryWebhookEndpointStore(webhooks),
    deliveryQueue: webhooks.queue,
    apiKeys: createMemoryApiKeyStore({
      clock: options.clock ?? createSystemClock(),
      newKeyId: options.newKeyId ?? (() => `key_${randomUUID()}`),
      recorder: options.outbox && createMemoryEventRecorder(options.outbox, webhooks),
    }),
  };
}
