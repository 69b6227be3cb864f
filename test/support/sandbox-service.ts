import { readConfig } from "../../src/config.js";
import type { Clock } from "../../src/lib/clock.js";
import type { Logger } from "../../src/lib/logger.js";
import { composeService, type RunningService } from "../../src/server/compose-service.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";
import { testStoreKind } from "./test-server.js";

/** One line the service logged. */
export interface LoggedLine {
  level: "info" | "warn" | "error";
  message: string;
  fields: Record<string, unknown>;
}

/** A REST answer with its JSON body parsed. */
export interface JsonReply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** SandboxService is the whole service as composeService builds it from an environment, on the suite's store. */
export interface SandboxService {
  readonly running: RunningService;
  /** http://127.0.0.1:port */
  readonly url: string;
  /** url + BASE_PATH */
  readonly restUrl: string;
  /** Every line logged so far. */
  readonly logs: LoggedLine[];
  /** Sends a REST request (path relative to restUrl) with an optional key and JSON body. */
  call<T = any>(method: string, path: string, options?: { key?: string; json?: unknown }): Promise<JsonReply<T>>;
  close(): Promise<void>;
}

/**
 * startSandboxService starts the service from env, as `payment-intents serve`
 * would, on 127.0.0.1 and a free port. On PostgreSQL (TEST_STORE=postgres) it
 * runs on a fresh database, with TEST_HELPERS=true unless env says otherwise
 * (with DATABASE_URL they must be asked for).
 */
export async function startSandboxService(
  env: Record<string, string> = {},
  options: { clock?: Clock; /** Delivery on a worker thread, as a server process runs it (its log to stderr, errors only). */ deliveryThread?: boolean } = {},
): Promise<SandboxService> {
  let database: TestDatabase | undefined;
  const fullEnv: Record<string, string> = { HOST: "127.0.0.1", PORT: "0", ...env };
  if (testStoreKind === "postgres" && env.DATABASE_URL === undefined) {
    database = await createTestDatabase();
    fullEnv.DATABASE_URL = database.url;
    fullEnv.TEST_HELPERS ??= "true";
  }
  const logs: LoggedLine[] = [];
  const logger: Logger = {
    info: (fields, message) => void logs.push({ level: "info", message, fields }),
    warn: (fields, message) => void logs.push({ level: "warn", message, fields }),
    error: (fields, message) => void logs.push({ level: "error", message, fields }),
  };
  const config = readConfig(fullEnv);
  const running = await composeService(config, {
    logger,
    clock: options.clock,
    deliveryThreadLog: options.deliveryThread ? { level: "error", pretty: false } : undefined,
  });
  const url = running.server.url;
  const restUrl = `${url}${config.basePath}`;
  return {
    running,
    url,
    restUrl,
    logs,
    async call(method, path, callOptions = {}) {
      const headers: Record<string, string> = {};
      if (callOptions.key !== undefined) headers.authorization = `Bearer ${callOptions.key}`;
      if (callOptions.json !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(`${restUrl}${path}`, {
        method,
        headers,
        body: callOptions.json === undefined ? undefined : JSON.stringify(callOptions.json),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
    },
    async close() {
      await running.server.close();
      await running.closeStores();
      await database?.drop();
    },
  };
}
