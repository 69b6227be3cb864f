import { readConfig, settingNames, type SettingName } from "../config.js";
import { createPinoLogger } from "../observability/pino-logger.js";
import { composeService } from "../server/compose-service.js";
import { createTestHelperClient, type TestHelpers } from "./test-helper-client.js";

/**
 * TestServerOptions are settings of the configuration table (README), by
 * their variable names: { CHECKOUT_TTL: "30m", MAX_PAYMENT_ATTEMPTS: 5 }.
 * Values are read exactly as the environment's, so a bad one throws the same
 * one-line error. The process's own environment is never read.
 */
export type TestServerOptions = { readonly [name in SettingName]?: string | number | boolean };

/** TestServer is one running sandbox: the whole service, in memory, on a free port of 127.0.0.1. */
export interface TestServer {
  /** The origin, http://127.0.0.1:<port>: the baseUrl of gRPC, gRPC-Web and Connect clients. */
  readonly url: string;
  /** url + BASE_PATH: the REST API's root, the contract's {base_url}. */
  readonly baseUrl: string;
  /** The key of a merchant made for this server alone. */
  readonly apiKey: string;
  readonly merchantId: string;
  /** The REST test helpers, with apiKey unless told otherwise. */
  readonly helpers: TestHelpers;
  /** Stops the server and frees everything it holds, so the test process can exit by itself. Safe to call twice. */
  close(): Promise<void>;
}

/** What startTestServer sets unless the options say otherwise. */
const defaults: Partial<Record<SettingName, string>> = {
  HOST: "127.0.0.1",
  PORT: "0",
  TEST_HELPERS: "true",
  TEST_CLOCK: "true",
  // Unexpected errors and warnings reach the test output; request lines do not.
  LOG_LEVEL: "warn",
};

/**
 * startTestServer starts the service for a test suite: in-memory stores (no
 * PostgreSQL code is loaded unless DATABASE_URL is given), the test helpers
 * and the test clock on, a fresh merchant and its key. Servers are
 * independent: each has its own stores, clock and port.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const env: Record<string, string> = { ...defaults };
  for (const [name, value] of Object.entries(options)) {
    if (!(settingNames as readonly string[]).includes(name)) {
      throw new TypeError(`startTestServer: unknown setting ${name}; the options are the variables of the configuration table, such as CHECKOUT_TTL`);
    }
    if (value === undefined) continue;
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      throw new TypeError(`startTestServer: ${name} must be a string, number or boolean`);
    }
    env[name] = String(value);
  }
  // The test clock is ours to default, so it goes when the helpers are turned off: only the helpers are then missing.
  if (env.TEST_HELPERS === "false" && options.TEST_CLOCK === undefined) delete env.TEST_CLOCK;
  const config = readConfig(env);
  if (!config.testHelpers.enabled) {
    throw new TypeError("startTestServer: the test server needs TEST_HELPERS; run `payment-intents serve` for a service without them");
  }
  // Lines go through process.stderr, so a test runner shows them with the test's output.
  const logger = createPinoLogger({ level: config.logLevel, destination: { write: (line) => void process.stderr.write(line) } });
  const service = await composeService(config, { logger, demoKey: false });
  const merchant = await service.testHelpers!.createMerchant().catch(async (error: unknown) => {
    await service.server.close();
    await service.closeStores();
    throw error;
  });
  const baseUrl = `${service.server.url}${config.basePath}`;
  let closing: Promise<void> | undefined;
  return {
    url: service.server.url,
    baseUrl,
    apiKey: merchant.apiKey,
    merchantId: merchant.merchantId,
    helpers: createTestHelperClient(baseUrl, merchant.apiKey),
    close() {
      closing ??= (async () => {
        await service.server.close();
        await service.closeStores();
      })();
      return closing;
    },
  };
}
