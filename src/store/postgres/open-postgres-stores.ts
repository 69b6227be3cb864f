import type { Clock } from "../../lib/clock.js";
import type { IdGenerator } from "../../lib/ids.js";
import type { ApiKeyStore } from "../api-key-store.js";
import type { MerchantDirectory } from "../merchant-directory.js";
import type { PaymentIntentStore } from "../payment-intent-store.js";
import type { SettlementAccountStore } from "../settlement-account-store.js";
import type { StoreHealth } from "../store-health.js";
import { createOrm, type DatabaseOptions } from "./create-orm.js";
import { runMigrations } from "./migrate.js";
import { createPostgresApiKeyStore } from "./postgres-api-key-store.js";
import { createPostgresMerchantDirectory } from "./postgres-merchant-directory.js";
import { createPostgresPaymentIntentStore } from "./postgres-payment-intent-store.js";
import { createPostgresSettlementAccountStore } from "./postgres-settlement-account-store.js";
import { createPostgresStoreHealth } from "./postgres-store-health.js";

export interface PostgresStores {
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
  apiKeys: ApiKeyStore;
  /** Readiness: whether the database answers now. */
  health: StoreHealth;
  merchants: MerchantDirectory;
  /** Migrations applied by this open (empty unless migrate was set). */
  applied: string[];
  close(): Promise<void>;
}

export interface OpenPostgresOptions extends DatabaseOptions {
  migrate: boolean;
  clock: Clock;
  ids: IdGenerator;
}

/** openPostgresStores connects, optionally migrates, and builds every PostgreSQL store. */
export async function openPostgresStores(options: OpenPostgresOptions): Promise<PostgresStores> {
  const orm = await createOrm(options);
  try {
    const applied = options.migrate ? await runMigrations(orm) : [];
    return {
      intents: createPostgresPaymentIntentStore(orm.em),
      accounts: createPostgresSettlementAccountStore(orm.em),
      merchants: createPostgresMerchantDirectory(orm.em),
      apiKeys: createPostgresApiKeyStore(orm.em, { clock: options.clock, newKeyId: options.ids.apiKeyId, cacheTtlMs: 10_000 }),
      health: createPostgresStoreHealth(orm.em),
      applied,
      close: () => orm.close(true),
    };
  } catch (error) {
    await orm.close(true);
    throw error;
  }
}
