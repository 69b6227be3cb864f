import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { ApiKeyStore } from "../store/api-key-store.js";
import { newApiKey } from "../auth/api-key-format.js";
import type { Config } from "../config.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { MerchantEnrollment } from "../sandbox/merchant-enrollment.js";
import { instrumentStore } from "../observability/instrument-store.js";
import type { ServiceMetrics } from "../observability/service-metrics.js";
import type { EventOutbox, EventStore } from "../store/event-store.js";
import { createMemoryStores } from "../store/memory/create-memory-stores.js";
import { createMemoryStoreHealth } from "../store/memory/memory-store-health.js";
import { createMemoryMerchantDirectory, type MerchantDirectory } from "../store/merchant-directory.js";
import type { PaymentIntentStore } from "../store/payment-intent-store.js";
import type { RefundStore } from "../store/refund-store.js";
import type { SettlementAccountStore } from "../store/settlement-account-store.js";
import type { DatabaseSettingsReport } from "../store/postgres/database-settings.js";
import type { StoreHealth } from "../store/store-health.js";
import type { WebhookEndpointStore } from "../store/webhook-endpoint-store.js";
import type { DeliveryQueue } from "../store/delivery-queue.js";
import { createSecretBox } from "../lib/secret-box.js";

/** A demo key is a credential: shown once on the terminal, never logged. */
const newDemoKey = () => newApiKey("test");

/** Stores is every store the service runs on, of one kind. */
export interface Stores {
  kind: "memory" | "postgres";
  intents: PaymentIntentStore;
  /** Refunds of those intents (and their amountRefunded). */
  refunds: RefundStore;
  accounts: SettlementAccountStore;
  /** The events the intents' changes record (through OpenStoresOptions.outbox). */
  events: EventStore;
  endpoints: WebhookEndpointStore;
  /** The deliveries of those events, which the delivery engine sends. */
  deliveryQueue: DeliveryQueue;
  verifier: ApiKeyVerifier;
  /** The same keys as a resource: what the key API (ApiKeyService) manages. */
  apiKeys: ApiKeyStore;
  /** Whether the stores can serve now: behind /readyz and gRPC health. */
  health: StoreHealth;
  /** Merchant names for the checkout page. */
  merchants: MerchantDirectory;
  /** Adds merchants made at run time (the test helpers) with their keys. */
  enrollment: MerchantEnrollment;
  /** Set when this start created a demo merchant's key. */
  demoKey?: string;
  /** PostgreSQL: what the settings check found at start (for the log and /readyz detail). */
  settings?: DatabaseSettingsReport;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  /** false: make no demo merchant when API_KEYS is unset (the ./testing entry makes its own). Default true. */
  demoKey?: boolean;
  /** Where the intent stores record events (service/event-outbox.ts); absent, no event is recorded. */
  outbox?: EventOutbox;
}

/**
 * openStores makes the one choice of implementations: PostgreSQL when
 * DATABASE_URL is set, else memory. The PostgreSQL modules (pg, MikroORM) are
 * loaded only in that case, so a process on the in-memory stores (a test
 * suite's sandbox) never loads them.
 */
export async function openStores(
  config: Config,
  clock: Clock,
  ids: IdGenerator,
  logger: Logger,
  options: OpenStoresOptions = {},
): Promise<Stores> {
  const wantsDemoKey = !config.apiKeys && options.demoKey !== false;
  if (!config.database) {
    const demoKey = wantsDemoKey ? newDemoKey() : undefined;
    const keys = config.apiKeys ?? (demoKey ? [{ merchantId: "demo", key: demoKey }] : []);
    const memory = createMemoryStores({ outbox: options.outbox, clock, newKeyId: ids.apiKeyId });
    const verifier = memory.apiKeys;
    for (const k of keys) verifier.add({ ...k, merchantName: k.merchantId });
    const merchants = createMemoryMerchantDirectory(keys.map((k) => ({ merchantId: k.merchantId, merchantName: k.merchantId })));
    return {
      kind: "memory",
      ...memory,
      verifier,
      merchants,
      enrollment: {
        async enroll({ merchantId, name, key }) {
          verifier.add({ merchantId, merchantName: name, key });
          merchants.add(merchantId, name);
        },
      },
      demoKey,
      health: createMemoryStoreHealth(),
      close: async () => {},
    };
  }

  const { openPostgresStores } = await import("../store/postgres/open-postgres-stores.js");
  const { describeSettingsReport } = await import("../store/postgres/database-settings.js");
  const db = config.database;
  const stores = await openPostgresStores({
    ...db,
    outbox: options.outbox,
    // Signing secrets are sealed at rest with WEBHOOK_SECRET_KEY (stored as they are without it).
    secretBox: createSecretBox({ key: config.webhooks.secretKey }),
    migrate: db.migrateOnStart,
    clock,
    ids,
    log: (message) => logger.info({ component: "database" }, message),
    onReachabilityChange: (change) =>
      change.kind === "unreachable"
        ? logger.error({ component: "database", reason: change.reason }, "the database is unreachable: requests that need it answer 503")
        : logger.info({ component: "database", unreachableForMs: Math.round(change.unreachableForMs) }, "the database answers again"),
  });
  if (stores.applied.length > 0) logger.info({ migrations: stores.applied }, "database migrations applied");
  const pending = stores.health.state().pendingMigrations ?? [];
  if (pending.length > 0) {
    logger.info({ component: "database", pending }, "database migrations are pending: not ready until they are applied (npm run db:migrate)");
  }
  // The deadline and the rules the stores rely on hold only if the settings in
  // their transactions are what was configured: say so at start when not.
  const settings = stores.settings;
  const findings = describeSettingsReport(settings);
  if (findings.length > 0) logger.error({ component: "database", findings }, "database settings differ from the configuration");
  logger.info(
    { component: "database", preparedStatements: settings.preparedStatements.usable },
    `database settings checked: ${settings.preparedStatements.reason}`,
  );
  let demoKey: string | undefined;
  if (config.apiKeys) {
    // API_KEYS from the environment are upserted: only their hashes are stored.
    for (const { merchantId, key } of config.apiKeys) await stores.apiKeys.addKey(merchantId, key);
  } else if (wantsDemoKey && (await stores.apiKeys.countActiveKeys()) === 0) {
    demoKey = newDemoKey();
    await stores.apiKeys.addKey("demo", demoKey);
  }
  const { apiKeys } = stores;
  const enrollment: MerchantEnrollment = {
    async enroll({ merchantId, name, key }) {
      await apiKeys.ensureMerchant(merchantId, name);
      await apiKeys.addKey(merchantId, key);
    },
  };
  return { kind: "postgres", ...stores, verifier: apiKeys, enrollment, demoKey };
}

/**
 * instrumentStores times every call to the stores the service uses
 * (payments_store_call_duration_seconds); the implementations never know.
 */
export function instrumentStores(stores: Stores, metrics: ServiceMetrics): Stores {
  return {
    ...stores,
    intents: instrumentStore(stores.intents, "payment_intents", metrics),
    refunds: instrumentStore(stores.refunds, "refunds", metrics),
    accounts: instrumentStore(stores.accounts, "settlement_accounts", metrics),
    verifier: instrumentStore(stores.verifier, "api_keys", metrics),
    merchants: instrumentStore(stores.merchants, "merchants", metrics),
  };
}
