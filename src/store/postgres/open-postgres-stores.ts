import type { Clock } from "../../lib/clock.js";
import type { IdGenerator } from "../../lib/ids.js";
import type { DeliveryQueue } from "../delivery-queue.js";
import { createSecretBox, type SecretBox } from "../../lib/secret-box.js";
import type { ApiKeyStore } from "../api-key-store.js";
import type { EventOutbox, EventStore } from "../event-store.js";
import type { MerchantDirectory } from "../merchant-directory.js";
import type { PaymentIntentStore } from "../payment-intent-store.js";
import type { RefundStore } from "../refund-store.js";
import type { SettlementAccountStore } from "../settlement-account-store.js";
import type { StoreHealth } from "../store-health.js";
import type { WebhookEndpointStore } from "../webhook-endpoint-store.js";
import { createDatabase, type DatabaseOptions } from "./database.js";
import { checkDatabaseSettings, type DatabaseSettingsReport } from "./database-settings.js";
import { runMigrations } from "./migrate.js";
import { migrations } from "./migrations/index.js";
import { createPostgresApiKeyStore } from "./postgres-api-key-store.js";
import { createPostgresDeliveryQueue } from "./postgres-delivery-queue.js";
import { createPostgresEventStore } from "./postgres-event-store.js";
import { createPostgresMerchantDirectory } from "./postgres-merchant-directory.js";
import { createPostgresPaymentIntentStore } from "./postgres-payment-intent-store.js";
import { createPostgresRefundStore } from "./postgres-refund-store.js";
import { createPostgresSettlementAccountStore } from "./postgres-settlement-account-store.js";
import { createPostgresStoreHealth } from "./postgres-store-health.js";
import { createPostgresWebhookEndpointStore } from "./postgres-webhook-endpoint-store.js";

export interface PostgresStores {
  intents: PaymentIntentStore;
  /** Refunds of those intents, which change their amount_refunded. */
  refunds: RefundStore;
  accounts: SettlementAccountStore;
  apiKeys: ApiKeyStore;
  /** Readiness: whether the database answers, from the pool's own state, and whether migrations are pending. */
  health: StoreHealth;
  merchants: MerchantDirectory;
  /** The events the intents' outbox recorded. */
  events: EventStore;
  endpoints: WebhookEndpointStore;
  /** The webhook deliveries, for the delivery engine. */
  deliveryQueue: DeliveryQueue;
  /** Migrations applied by this open (empty unless migrate was set). */
  applied: string[];
  /** What the settings check found when the stores were opened (see database-settings.ts). */
  settings: DatabaseSettingsReport;
  /** Reads the settings the stores' transactions run with again and reports what differs. */
  checkSettings(): Promise<DatabaseSettingsReport>;
  close(): Promise<void>;
}

export interface OpenPostgresOptions extends DatabaseOptions {
  migrate: boolean;
  clock: Clock;
  ids: IdGenerator;
  /** Where the migration tool's own messages go. */
  log?: (message: string) => void;
  /** How often the migrations watch (on when migrate is off) looks again while some are pending; default 5 s. */
  migrationCheckMs?: number;
  /** Records an event with every change of an intent (store/event-store.ts); none: intents record no events. */
  outbox?: EventOutbox;
  /** Seals webhook signing secrets at rest (WEBHOOK_SECRET_KEY); default: stored as they are ("plain:"). */
  secretBox?: SecretBox;
}

/**
 * openPostgresStores optionally migrates (MikroORM, on a connection of its
 * own that is closed afterwards), then builds every PostgreSQL store on one
 * pg pool. It checks the database's settings once (database-settings.ts) and
 * uses named prepared statements when every connection is a session of its
 * own (not through a pooler in transaction mode). When it does not migrate,
 * it reads which migrations are applied at start and keeps watching, so
 * readiness can hold the instance back until another step has applied them.
 */
export async function openPostgresStores(options: OpenPostgresOptions): Promise<PostgresStores> {
  const applied = options.migrate ? await runMigrations({ url: options.url, log: options.log }) : [];
  const db = createDatabase(options);
  let settings: DatabaseSettingsReport;
  try {
    settings = await checkDatabaseSettings(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  db.usePreparedStatements(settings.preparedStatements.usable);
  const health = createPostgresStoreHealth(db, {
    migrationNames: migrations.map((migration) => migration.name),
    watchMigrations: !options.migrate,
    pendingCheckMs: options.migrationCheckMs,
  });
  await health.start();
  const secretBox = options.secretBox ?? createSecretBox();
  return {
    settings,
    intents: createPostgresPaymentIntentStore(db, { outbox: options.outbox }),
    refunds: createPostgresRefundStore(db, { outbox: options.outbox }),
    events: createPostgresEventStore(db),
    endpoints: createPostgresWebhookEndpointStore(db, { secretBox }),
    deliveryQueue: createPostgresDeliveryQueue(db, { secretBox }),
    accounts: createPostgresSettlementAccountStore(db),
    merchants: createPostgresMerchantDirectory(db),
    apiKeys: createPostgresApiKeyStore(db, { clock: options.clock, newKeyId: options.ids.apiKeyId, cacheTtlMs: 10_000, outbox: options.outbox }),
    health,
    applied,
    checkSettings: () => checkDatabaseSettings(db),
    close: () => {
      health.stop();
      return db.close();
    },
  };
}
