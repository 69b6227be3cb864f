import { randomBytes } from "node:crypto";
import type { ApiKeyVerifier } from "../../src/auth/api-key-verifier.js";
import { newApiKey } from "../../src/auth/api-key-format.js";
import { readConfig, type SettingName } from "../../src/config.js";
import type { HttpRoute } from "../../src/http/http-route.js";
import type { Clock } from "../../src/lib/clock.js";
import { silentLogger, type Logger } from "../../src/lib/logger.js";
import type { ListeningServer } from "../../src/listener/listen.js";
import type { ListenLimits } from "../../src/listener/listen-limits.js";
import type { PaymentProcessor } from "../../src/processor/payment-processor.js";
import { composeService, type RunningService, type ServiceOverrides } from "../../src/server/compose-service.js";
import type { AppCaps } from "../../src/server/create-app.js";
import type { Stores } from "../../src/server/open-stores.js";
import type { RefundParts } from "../../src/server/refund-parts.js";
import type { DeliveryQueue } from "../../src/store/delivery-queue.js";
import type { EventStore } from "../../src/store/event-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import type { RefundStore } from "../../src/store/refund-store.js";
import type { SettlementAccountStore } from "../../src/store/settlement-account-store.js";
import type { WebhookEndpointStore } from "../../src/store/webhook-endpoint-store.js";
import type { HostResolver } from "../../src/webhooks/host-resolver.js";
import { createHeldWebhookSender, type HeldWebhookSender } from "./held-webhook-sender.js";
import { createTestDatabase } from "./postgres.js";

export interface TestServer extends ListeningServer {
  /** REST root: url + basePath, e.g. http://127.0.0.1:41234/v1 */
  readonly restUrl: string;
  /** API keys by merchant id: "merchantA" and "merchantB" always exist. Test-mode keys of today's format. */
  readonly keys: Record<string, string>;
  /** Live-mode keys (sk_live_, the current format) of merchantA and merchantB. */
  readonly liveKeys: Record<string, string>;
  /** Authorization header value for a merchant. */
  bearer(merchantId?: string): string;
  /** The running service: its stores, readiness, metrics and webhooks, as composeService built them. */
  readonly service: RunningService;
  readonly intents: PaymentIntentStore;
  readonly accounts: SettlementAccountStore;
  /** The refunds behind RefundService, in the server's store kind. */
  readonly refunds: RefundStore;
  /** What refunds run beside the API: the reconciler, the late-success and notice handlers. */
  readonly refundParts: RefundParts;
  /** The stores' own events, endpoints and deliveries, which the outbox writes as intents change. */
  readonly recordedWebhooks: RecordedWebhooks;
  /** The merchants' webhook receivers: every delivery attempt waits here for the test's answer. */
  readonly receivers: HeldWebhookSender;
}

/** RecordedWebhooks: what the outbox writes, read through the ports, in the server's store kind. */
export interface RecordedWebhooks {
  events: EventStore;
  endpoints: WebhookEndpointStore;
  deliveryQueue: DeliveryQueue;
}

/** The Paystack secret key every test server's Paystack is configured with (a stand-in checks it). */
export const testPaystackKey = "sk_test_7e57000000000000000000000000000000000001";

export interface TestServerOptions {
  clock?: Clock;
  basePath?: string;
  /** Processor methods offered; default ["paystack"] (configured with testPaystackKey). */
  processors?: string[];
  logger?: Logger;
  /** Settings of the configuration table by their variable names, read as the environment's are. */
  settings?: Partial<Record<SettingName, string>>;
  /** Replaces the server's intent store (a test's failing store). */
  intents?: PaymentIntentStore;
  /** Replaces the server's settlement account store. */
  accounts?: SettlementAccountStore;
  /** Wraps the stores as opened (a switchable health, a counting verifier). */
  wrapStores?: ServiceOverrides["wrapStores"];
  /**
   * Which stores back the server: TEST_STORE=postgres runs the same suites
   * on a fresh PostgreSQL database per server.
   */
  store?: "memory" | "postgres";
  /** Plain HTTP routes served beside the service's own: a test's slow or failing page. */
  httpRoutes?: readonly HttpRoute[];
  /** Wraps the API key verifier the server uses (e.g. in a rate limit). */
  wrapVerifier?(verifier: ApiKeyVerifier): ApiKeyVerifier;
  /** Per-merchant caps and polling intervals a test shrinks. */
  caps?: AppCaps;
  /** Resolves webhook endpoint hosts; default publicResolver. */
  resolve?: HostResolver;
  /** Listener limits (timeouts, HTTP/2 stream cap). */
  limits?: Partial<ListenLimits>;
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
  /** Told of every finished request (a test counting what the server answered). */
  onRequestEnd?: ServiceOverrides["onRequestEnd"];
}

/** The store the suites run on by default in this process. */
export const testStoreKind: "memory" | "postgres" = process.env.TEST_STORE === "postgres" ? "postgres" : "memory";

/**
 * startTestServer runs the whole service, as composeService builds it for
 * production, on 127.0.0.1 port 0 with two merchants with random keys.
 * Close it in an after() hook.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const keys: Record<string, string> = {
    merchantA: `sk_test_${randomBytes(18).toString("base64url")}`,
    merchantB: `sk_test_${randomBytes(18).toString("base64url")}`,
  };
  const liveKeys: Record<string, string> = { merchantA: newApiKey("live"), merchantB: newApiKey("live") };
  const basePath = options.basePath ?? "/v1";
  const onPostgres = Boolean(options.databaseUrl) || ((options.store ?? testStoreKind) === "postgres" && !options.intents && !options.accounts);
  const database = !onPostgres ? undefined : options.databaseUrl ? { url: options.databaseUrl, drop: async () => {} } : await createTestDatabase();
  const processors = options.processors ?? ["paystack"];
  const config = readConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    BASE_PATH: basePath,
    API_KEYS: [...Object.entries(keys), ...Object.entries(liveKeys)]
      .map(([merchantId, key]) => `${merchantId}:${key}`)
      .join(","),
    // "paystack" is offered by its key, as in production: a stand-in's URL, or a closed port.
    PAYMENT_PROCESSORS: processors.filter((name) => name !== "paystack").join(","),
    ...(processors.includes("paystack") && { PAYSTACK_SECRET_KEY: testPaystackKey, PAYSTACK_BASE_URL: "http://127.0.0.1:9" }),
    // The suites count requests themselves; a limit is a test's own choice.
    RATE_LIMIT_RPS: "0",
    AUTH_FAILURES_PER_MINUTE: "0",
    // The API alone: the suites of the test helpers turn them on.
    TEST_HELPERS: "false",
    // Production's URL rule (https, public addresses), not the loopback sandbox's default; a suite asks for private URLs.
    WEBHOOK_ALLOW_PRIVATE_URLS: "false",
    // A held delivery attempt is cut at once when the server closes.
    SHUTDOWN_GRACE_MS: "0",
    ...(database && { DATABASE_URL: database.url, DB_POOL_MAX: String(options.poolMax ?? 10), DB_STATEMENT_TIMEOUT_MS: "5000" }),
    ...options.settings,
  });
  const receivers = createHeldWebhookSender();
  let service: RunningService | undefined;
  try {
    service = await composeService(
      { ...config, limits: { ...config.limits, ...options.limits } },
      {
        logger: options.logger ?? silentLogger,
        clock: options.clock,
        processor: options.processor,
        processorTimeoutMs: options.processorTimeoutMs,
        resolve: options.resolve ?? publicResolver,
        webhookSender: receivers,
        httpRoutes: options.httpRoutes,
        caps: options.caps,
        onRequestEnd: options.onRequestEnd,
        wrapStores: (opened) => {
          let stores: Stores = {
            ...opened,
            ...(options.intents && { intents: options.intents }),
            ...(options.accounts && { accounts: options.accounts }),
            ...(options.wrapVerifier && { verifier: options.wrapVerifier(opened.verifier) }),
          };
          if (options.wrapStores) stores = options.wrapStores(stores);
          return stores;
        },
      },
    );
  } catch (error) {
    await database?.drop();
    throw error;
  }
  const running = service;
  const { stores } = running;
  const recorded: RecordedWebhooks = { events: stores.events, endpoints: stores.endpoints, deliveryQueue: stores.deliveryQueue };
  let closed: Promise<void> | undefined;
  return {
    host: running.server.host,
    port: running.server.port,
    url: running.server.url,
    /** Safe to call twice: the second call waits for the first. */
    close: (closeOptions) =>
      (closed ??= (async () => {
        await running.server.close(closeOptions);
        await running.closeStores();
        await database?.drop();
      })()),
    restUrl: `${running.server.url}${basePath}`,
    keys,
    liveKeys,
    bearer: (merchantId = "merchantA") => `Bearer ${keys[merchantId]}`,
    service: running,
    intents: stores.intents,
    accounts: stores.accounts,
    refunds: stores.refunds,
    refundParts: running.refunds,
    recordedWebhooks: recorded,
    receivers,
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
