import { randomBytes } from "node:crypto";
import type { ApiKeyVerifier } from "./auth/api-key-verifier.js";
import { createMemoryApiKeyVerifier } from "./auth/memory-api-key-verifier.js";
import { ConfigError, readConfig, type Config } from "./config.js";
import { createSystemClock, type Clock } from "./lib/clock.js";
import { createIdGenerator, type IdGenerator } from "./lib/ids.js";
import { createJsonLogger, type Logger } from "./lib/logger.js";
import { createApp } from "./server/create-app.js";
import { listen } from "./server/listen.js";
import { createMemoryPaymentIntentStore } from "./store/memory/memory-payment-intent-store.js";
import { createMemorySettlementAccountStore } from "./store/memory/memory-settlement-account-store.js";
import type { PaymentIntentStore } from "./store/payment-intent-store.js";
import { openPostgresStores } from "./store/postgres/open-postgres-stores.js";
import type { SettlementAccountStore } from "./store/settlement-account-store.js";

/** A demo key is a credential: shown once on the terminal, never logged. */
const newDemoKey = () => `sk_test_${randomBytes(24).toString("base64url")}`;

interface Stores {
  kind: "memory" | "postgres";
  intents: PaymentIntentStore;
  accounts: SettlementAccountStore;
  verifier: ApiKeyVerifier;
  /** Set when this start created a demo merchant's key. */
  demoKey?: string;
  close(): Promise<void>;
}

/** openStores makes the one choice of implementations: PostgreSQL when DATABASE_URL is set. */
async function openStores(config: Config, clock: Clock, ids: IdGenerator, logger: Logger): Promise<Stores> {
  if (!config.database) {
    const demoKey = config.apiKeys ? undefined : newDemoKey();
    const keys = config.apiKeys ?? [{ merchantId: "demo", key: demoKey! }];
    return {
      kind: "memory",
      intents: createMemoryPaymentIntentStore(),
      accounts: createMemorySettlementAccountStore(),
      verifier: createMemoryApiKeyVerifier(keys.map((k) => ({ ...k, merchantName: k.merchantId }))),
      demoKey,
      close: async () => {},
    };
  }

  const db = config.database;
  const stores = await openPostgresStores({
    ...db,
    migrate: db.migrateOnStart,
    clock,
    ids,
    log: (message) => logger.info({ component: "database" }, message),
  });
  if (stores.applied.length > 0) logger.info({ migrations: stores.applied }, "database migrations applied");
  let demoKey: string | undefined;
  if (config.apiKeys) {
    // API_KEYS from the environment are upserted: only their hashes are stored.
    for (const { merchantId, key } of config.apiKeys) await stores.apiKeys.addKey(merchantId, key);
  } else if ((await stores.apiKeys.countActiveKeys()) === 0) {
    demoKey = newDemoKey();
    await stores.apiKeys.addKey("demo", demoKey);
  }
  return { kind: "postgres", ...stores, verifier: stores.apiKeys, demoKey };
}

/**
 * The entry point: the only place that reads the environment and chooses
 * implementations.
 */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = readConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }

  const logger = createJsonLogger();
  const clock = createSystemClock();
  const ids = createIdGenerator(clock);
  const stores = await openStores(config, clock, ids, logger);

  const handler = createApp({
    intents: stores.intents,
    accounts: stores.accounts,
    verifier: stores.verifier,
    clock,
    ids,
    logger,
    publicUrl: config.publicUrl,
    basePath: config.basePath,
    processors: config.processors,
    pageTokenSecret: config.pageTokenSecret ?? randomBytes(32).toString("base64url"),
    maxBodyBytes: config.maxBodyBytes,
  });
  const server = await listen(handler, { host: config.host, port: config.port });
  logger.info({ url: server.url, basePath: config.basePath, store: stores.kind }, "payment intent service listening");

  if (stores.demoKey) {
    const key = stores.demoKey;
    process.stdout.write(
      [
        "",
        `Payment Intent service on ${server.url} (gRPC, gRPC-Web, Connect and REST under ${config.basePath || "/"})`,
        `No API_KEYS set: demo merchant "demo" with API key ${key}`,
        "Try:",
        `  curl -s -X POST ${server.url}${config.basePath}/v2/payment-intents \\`,
        `    -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' \\`,
        `    -d '{"amount": 50000, "customerEmail": "ada@example.com", "clientReference": "order-1001"}'`,
        "",
      ].join("\n"),
    );
  }

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server
      .close()
      .then(() => stores.close())
      .then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

await main();
