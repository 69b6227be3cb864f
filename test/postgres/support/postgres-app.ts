import { randomBytes } from "node:crypto";
import { readConfig } from "../../../src/config.js";
import { silentLogger, type Logger } from "../../../src/lib/logger.js";
import type { ListeningServer } from "../../../src/listener/listen.js";
import { composeService } from "../../../src/server/compose-service.js";
import type { Stores } from "../../../src/server/open-stores.js";

/** A merchant key for a test app: random, and long enough for API_KEYS. */
export const newApiKey = () => `sk_test_${randomBytes(18).toString("base64url")}`;

export interface PostgresApp extends ListeningServer {
  /** REST root: url + "/v1". */
  readonly restUrl: string;
  readonly stores: Stores;
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
 * startPostgresApp serves the whole service, as composeService builds it, in
 * this process over its own PostgreSQL stores (its own pool), on 127.0.0.1
 * port 0: what one instance of a multi-instance deployment is.
 */
export async function startPostgresApp(options: PostgresAppOptions): Promise<PostgresApp> {
  const config = readConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    BASE_PATH: "/v1",
    DATABASE_URL: options.databaseUrl,
    API_KEYS: Object.entries(options.keys)
      .map(([merchantId, key]) => `${merchantId}:${key}`)
      .join(","),
    DB_POOL_MAX: String(options.poolMax ?? 10),
    DB_STATEMENT_TIMEOUT_MS: String(options.statementTimeoutMs ?? 5000),
    PAGE_TOKEN_SECRET: options.pageTokenSecret ?? randomBytes(32).toString("base64url"),
    RATE_LIMIT_RPS: "0",
    AUTH_FAILURES_PER_MINUTE: "0",
  });
  const service = await composeService(config, { logger: options.logger ?? silentLogger });
  return {
    host: service.server.host,
    port: service.server.port,
    url: service.server.url,
    restUrl: `${service.server.url}/v1`,
    stores: service.stores,
    close: async () => {
      await service.server.close();
      await service.closeStores();
    },
  };
}
