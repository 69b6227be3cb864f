import { randomBytes } from "node:crypto";
import { EventSchema } from "../../gen/payments/v2/events_pb.js";
import type { ApiKeyVerifier } from "../../src/auth/api-key-verifier.js";
import { createMemoryApiKeyVerifier } from "../../src/auth/memory-api-key-verifier.js";
import type { NodeHandler } from "../../src/http/node-http.js";
import type { Clock } from "../../src/lib/clock.js";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { silentLogger, type Logger } from "../../src/lib/logger.js";
import { createRestEncoders } from "../../src/protocols/rest/encode-json.js";
import { createApp, type AppOptions } from "../../src/server/create-app.js";
import { listen, type ListeningServer, type ListenOptions } from "../../src/listener/listen.js";
import { createEventNotifier } from "../../src/service/event-notifier.js";
import { createEventOutbox } from "../../src/service/event-outbox.js";
import { createPaymentIntentPresenter } from "../../src/service/payment-intent-presenter.js";
import { createPaymentMethodCatalogue } from "../../src/service/payment-method-catalogue.js";
import type { EventStore } from "../../src/store/event-store.js";
import { createMemoryStores } from "../../src/store/memory/create-memory-stores.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import type { RefundStore } from "../../src/store/refund-store.js";
import type { PaymentProcessor } from "../../src/processor/payment-processor.js";
import { createTestModeProcessor, type TestModeProcessor } from "../../src/processor/test-mode-processor.js";
import { createRefundParts, type RefundParts } from "../../src/server/refund-parts.js";
import type { SettlementAccountStore } from "../../src/store/settlement-account-store.js";
import type { WebhookEndpointStore } from "../../src/store/webhook-endpoint-store.js";
import type { DeliveryQueue } from "../../src/store/delivery-queue.js";
import type { HostResolver } from "../../src/webhooks/host-resolver.js";
import { createFakeWebhookStores, type FakeWebhookStores } from "./fake-webhook-stores.js";
import { createTestDatabase, openMigratedStores } from "./postgres.js";

export interface TestServer extends ListeningServer {
  /** REST root: url + basePath, e.g. http://127.0.0.1:41234/v1 */
  readonly restUrl: string;
  /** API keys by merchant id: "merchantA" and "merchantB" always exist. */
  readonly keys: Record<string, string>;
  /** Authorization header value for a merchant. */
  bearer(merchantId?: string): string;
  readonly intents: PaymentIntentStore;
  readonly accounts: SettlementAccountStore;
  /** The refunds behind RefundService, in the server's store kind. */
  readonly refunds: RefundStore;
  /** What refunds run beside the API: the reconciler, the late-success and notice handlers. */
  readonly refundParts: RefundParts;
  /** The in-test event and endpoint stores behind EventService and WebhookEndpointService (webhookStores "fake" only). */
  readonly webhooks: FakeWebhookStores;
  /** The stores' own events, endpoints and deliveries (webhookStores "recorded" only). */
  readonly recordedWebhooks: RecordedWebhooks | undefined;
}

/** RecordedWebhooks: what the outbox writes, read through the ports, in the server's store kind. */
export interface RecordedWebhooks {
  events: EventStore;
  endpoints: WebhookEndpointStore;
  deliveryQueue: DeliveryQueue;
}

export interface TestServerOptions {
  clock?: Clock;
  basePath?: string;
  processors?: string[];
  logger?: Logger;
  intents?: PaymentIntentStore;
  accounts?: SettlementAccountStore;
  /**
   * Which stores back the server when none are given: TEST_STORE=postgres
   * runs the same suites on a fresh PostgreSQL database per server.
   */
  store?: "memory" | "postgres";
  /** Extra createApp parts: plain HTTP routes, RPC services without a key, observers (metrics). */
  app?: Pick<AppOptions, "httpRoutes" | "procedures" | "events" | "onRequestEnd" | "cors" | "keyLimit" | "failedAuth" | "streamWriteTimeoutMs">;
  /** Wraps the API key verifier the server uses (e.g. in a rate limit). */
  wrapVerifier?(verifier: ApiKeyVerifier): ApiKeyVerifier;
  /** Most settlement accounts one merchant may register. */
  maxSettlementAccounts?: number;
  /**
   * What records events and keeps endpoints: "fake" (default), small in-test
   * stores whose events a suite records at will; "recorded", the server's
   * own stores (memory, or PostgreSQL under TEST_STORE=postgres) with the
   * event outbox, so intents changed through the API record their events and
   * deliveries as in the service.
   */
  webhookStores?: "fake" | "recorded";
  /** Event and endpoint API settings beside the stores (caps, the resolver, private URLs). */
  webhooks?: Partial<Omit<NonNullable<AppOptions["webhooks"]>, "events" | "endpoints" | "notifier">>;
  /** Listener limits (timeouts, HTTP/2 stream cap). */
  limits?: ListenOptions["limits"];
  /**
   * Runs on this PostgreSQL database instead of a fresh one (migrating it if
   * needed, never dropping it), so several servers share one database as
   * instances of one service do.
   */
  databaseUrl?: string;
  /** DB_POOL_MAX of the PostgreSQL stores; default 10. */
  poolMax?: number;
  /** The processor the checkout charges and refunds go through; default the test-mode processor. */
  processor?: PaymentProcessor;
  /** PROCESSOR_TIMEOUT_MS for refunds' processor calls. */
  processorTimeoutMs?: number;
}

/** The store the suites run on by default in this process. */
export const testStoreKind: "memory" | "postgres" = process.env.TEST_STORE === "postgres" ? "postgres" : "memory";

/**
 * startTestServer runs the whole service on 127.0.0.1 port 0 with in-memory
 * stores and two merchants with random keys. Close it in an after() hook.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const clock = options.clock ?? createSystemClock();
  const keys: Record<string, string> = {
    merchantA: `sk_test_${randomBytes(18).toString("base64url")}`,
    merchantB: `sk_test_${randomBytes(18).toString("base64url")}`,
  };
  const basePath = options.basePath ?? "/v1";
  const entries = Object.entries(keys).map(([merchantId, key]) => ({ merchantId, merchantName: merchantId, key }));
  const ids = createIdGenerator(clock);
  // The outbox renders checkout links with the server's URL, known once listening.
  let presenter = createPaymentIntentPresenter({ publicUrl: "http://127.0.0.1", catalogue: createPaymentMethodCatalogue(options.processors ?? ["paystack"]) });
  const notifier = createEventNotifier();
  const outbox =
    options.webhookStores === "recorded"
      ? createEventOutbox({
          presenter: { toMessage: (...args) => presenter.toMessage(...args), toListItem: (...args) => presenter.toListItem(...args) },
          ids,
          encodeJson: createRestEncoders().encoderFor(EventSchema),
          onCommitted: (events) => notifier.notify(events),
        })
      : undefined;
  // One memory state for all, so list items show the accounts registered (as one database does).
  const memory = createMemoryStores({ outbox });
  let intents = options.intents ?? memory.intents;
  let refunds = memory.refunds;
  let accounts = options.accounts ?? memory.accounts;
  let verifier: ApiKeyVerifier = createMemoryApiKeyVerifier(entries);
  let recorded: RecordedWebhooks = { events: memory.events, endpoints: memory.endpoints, deliveryQueue: memory.deliveryQueue };
  let closeStores = async () => {};
  if ((options.databaseUrl || (options.store ?? testStoreKind) === "postgres") && !options.intents && !options.accounts) {
    const database = options.databaseUrl ? { url: options.databaseUrl, drop: async () => {} } : await createTestDatabase();
    const stores = await openMigratedStores(database.url, { clock, outbox, poolMax: options.poolMax });
    for (const { merchantId, key } of entries) await stores.apiKeys.addKey(merchantId, key);
    ({ intents, accounts, refunds } = stores);
    recorded = { events: stores.events, endpoints: stores.endpoints, deliveryQueue: stores.deliveryQueue };
    verifier = stores.apiKeys;
    closeStores = async () => {
      await stores.close();
      await database.drop();
    };
  }
  const fake = createFakeWebhookStores();
  const webhookPorts = outbox ? { ...recorded, notifier } : fake;
  // Listen first, so the app can be built with the real port in publicUrl.
  let handler: NodeHandler = () => {};
  const server = await listen((req, res) => handler(req, res), { host: "127.0.0.1", port: 0, limits: options.limits });
  if (options.wrapVerifier) verifier = options.wrapVerifier(verifier);
  const testProcessor: TestModeProcessor | undefined = options.processor ? undefined : createTestModeProcessor({ publicUrl: server.url });
  const processor = options.processor ?? testProcessor!;
  const logger = options.logger ?? silentLogger;
  const refundParts = createRefundParts({ refunds, intents, processor, clock, ids, logger, processorTimeoutMs: options.processorTimeoutMs });
  presenter = createPaymentIntentPresenter({ publicUrl: server.url, catalogue: createPaymentMethodCatalogue(options.processors ?? ["paystack"]) });
  handler = createApp({
    intents,
    accounts,
    verifier,
    clock,
    ids,
    logger,
    publicUrl: server.url,
    basePath,
    processors: options.processors ?? ["paystack"],
    pageTokenSecret: randomBytes(32).toString("base64url"),
    maxBodyBytes: 64 * 1024,
    maxSettlementAccounts: options.maxSettlementAccounts,
    webhooks: {
      events: webhookPorts.events,
      endpoints: webhookPorts.endpoints,
      notifier: webhookPorts.notifier,
      allowPrivateUrls: false,
      resolve: publicResolver,
      ...options.webhooks,
    },
    processor,
    refunds: refundParts,
    processorTimeoutMs: options.processorTimeoutMs,
    testThreeDs: testProcessor?.decide,
    ...options.app,
  });
  return {
    ...server,
    close: async (closeOptions) => {
      await server.close(closeOptions);
      await closeStores();
    },
    restUrl: `${server.url}${basePath}`,
    keys,
    bearer: (merchantId = "merchantA") => `Bearer ${keys[merchantId]}`,
    intents,
    accounts,
    refunds,
    refundParts,
    get webhooks(): FakeWebhookStores {
      if (outbox) throw new Error('this test server records events in its own stores (webhookStores: "recorded"): change intents through the API');
      return fake;
    },
    recordedWebhooks: outbox ? recorded : undefined,
  };
}

/**
 * publicResolver plays DNS for the suites without a network: names under
 * example.com resolve to a public address (93.184.215.14), "internal.example"
 * to a private one, anything else does not resolve.
 */
export const publicResolver: HostResolver = async (hostname) => {
  if (hostname === "internal.example") return [{ address: "10.0.0.5", family: 4 }];
  if (hostname === "example.com" || hostname.endsWith(".example.com")) return [{ address: "93.184.215.14", family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
};
