import { randomBytes } from "node:crypto";
import { createSystemClock } from "../../../src/lib/clock.js";
import { createIdGenerator } from "../../../src/lib/ids.js";
import { silentLogger, type Logger } from "../../../src/lib/logger.js";
import { createApp } from "../../../src/server/create-app.js";
import { listen, type ListeningServer } from "../../../src/listener/listen.js";
import type { NodeHandler } from "../../../src/http/node-http.js";
import type { PostgresStores } from "../../../src/store/postgres/open-postgres-stores.js";
import { openMigratedStores } from "../../support/postgres.js";

/** A merchant key for a test app: random, and long enough for API_KEYS. */
export const newApiKey = () => `sk_test_${randomBytes(18).toString("base64url")}`;

export interface PostgresApp extends ListeningServer {
  /** REST root: url + "/v1". */
  readonly restUrl: string;
  readonly stores: PostgresStores;
  close(): Promise<void>;
}

export interface PostgresAppOptions {
  databaseUrl: string;
  /** Keys stored for merchants before serving: merchant id → key. */
  keys: Record<string, string>;
  statementTimeoutMs?: number;
  poolMax?: number;
  /** Shared by apps on one database, so page tokens work across them. */
  pageTokenSecret?: string;
  logger?: Logger;
}

/**
 * startPostgresApp serves the whole service in this process over its own
 * PostgreSQL stores (its own pool), on 127.0.0.1 port 0: what one instance of
 * a multi-instance deployment is.
 */
export async function startPostgresApp(options: PostgresAppOptions): Promise<PostgresApp> {
  const clock = createSystemClock();
  const ids = createIdGenerator(clock);
  const stores = await openMigratedStores(options.databaseUrl, {
    poolMax: options.poolMax,
    statementTimeoutMs: options.statementTimeoutMs,
    clock,
  });
  try {
    for (const [merchantId, key] of Object.entries(options.keys)) await stores.apiKeys.addKey(merchantId, key);
    let handler: NodeHandler = () => {};
    const server = await listen((req, res) => handler(req, res), { host: "127.0.0.1", port: 0 });
    handler = createApp({
      intents: stores.intents,
      accounts: stores.accounts,
      verifier: stores.apiKeys,
      clock,
      ids,
      logger: options.logger ?? silentLogger,
      publicUrl: server.url,
      basePath: "/v1",
      processors: [],
      pageTokenSecret: options.pageTokenSecret ?? randomBytes(32).toString("base64url"),
      maxBodyBytes: 64 * 1024,
    });
    return {
      ...server,
      restUrl: `${server.url}/v1`,
      stores,
      close: async () => {
        await server.close();
        await stores.close();
      },
    };
  } catch (error) {
    await stores.close();
    throw error;
  }
}
