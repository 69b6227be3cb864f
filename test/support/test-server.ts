import { randomBytes } from "node:crypto";
import { createMemoryApiKeyVerifier } from "../../src/auth/memory-api-key-verifier.js";
import type { Clock } from "../../src/lib/clock.js";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import { silentLogger, type Logger } from "../../src/lib/logger.js";
import { createApp } from "../../src/server/create-app.js";
import { listen, type ListeningServer } from "../../src/server/listen.js";
import type { NodeHandler } from "../../src/server/node-http.js";
import { createMemoryPaymentIntentStore } from "../../src/store/memory/memory-payment-intent-store.js";
import { createMemorySettlementAccountStore } from "../../src/store/memory/memory-settlement-account-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import type { SettlementAccountStore } from "../../src/store/settlement-account-store.js";

export interface TestServer extends ListeningServer {
  /** REST root: url + basePath, e.g. http://127.0.0.1:41234/v1 */
  readonly restUrl: string;
  /** API keys by merchant id: "merchantA" and "merchantB" always exist. */
  readonly keys: Record<string, string>;
  /** Authorization header value for a merchant. */
  bearer(merchantId?: string): string;
  readonly intents: PaymentIntentStore;
  readonly accounts: SettlementAccountStore;
}

export interface TestServerOptions {
  clock?: Clock;
  basePath?: string;
  processors?: string[];
  logger?: Logger;
  intents?: PaymentIntentStore;
  accounts?: SettlementAccountStore;
}

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
  const intents = options.intents ?? createMemoryPaymentIntentStore();
  const accounts = options.accounts ?? createMemorySettlementAccountStore();
  const basePath = options.basePath ?? "/v1";
  // Listen first, so the app can be built with the real port in publicUrl.
  let handler: NodeHandler = () => {};
  const server = await listen((req, res) => handler(req, res), { host: "127.0.0.1", port: 0 });
  handler = createApp({
    intents,
    accounts,
    verifier: createMemoryApiKeyVerifier(
      Object.entries(keys).map(([merchantId, key]) => ({ merchantId, merchantName: merchantId, key })),
    ),
    clock,
    ids: createIdGenerator(clock),
    logger: options.logger ?? silentLogger,
    publicUrl: server.url,
    basePath,
    processors: options.processors ?? ["paystack"],
    pageTokenSecret: randomBytes(32).toString("base64url"),
    maxBodyBytes: 64 * 1024,
  });
  return {
    ...server,
    close: () => server.close(),
    restUrl: `${server.url}${basePath}`,
    keys,
    bearer: (merchantId = "merchantA") => `Bearer ${keys[merchantId]}`,
    intents,
    accounts,
  };
}
