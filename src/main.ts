import { randomBytes } from "node:crypto";
import { createMemoryApiKeyVerifier } from "./auth/memory-api-key-verifier.js";
import { ConfigError, readConfig } from "./config.js";
import { createSystemClock } from "./lib/clock.js";
import { createIdGenerator } from "./lib/ids.js";
import { createJsonLogger } from "./lib/logger.js";
import { createApp } from "./server/create-app.js";
import { listen } from "./server/listen.js";
import { createMemoryPaymentIntentStore } from "./store/memory/memory-payment-intent-store.js";
import { createMemorySettlementAccountStore } from "./store/memory/memory-settlement-account-store.js";

/**
 * The entry point: the only place that reads the environment and chooses
 * implementations.
 */
async function main(): Promise<void> {
  let config;
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
  const demo = config.apiKeys === undefined;
  const apiKeys = config.apiKeys ?? [{ merchantId: "demo", key: `sk_test_${randomBytes(24).toString("base64url")}` }];

  const handler = createApp({
    intents: createMemoryPaymentIntentStore(),
    accounts: createMemorySettlementAccountStore(),
    verifier: createMemoryApiKeyVerifier(apiKeys.map((k) => ({ ...k, merchantName: k.merchantId }))),
    clock,
    ids: createIdGenerator(clock),
    logger,
    publicUrl: config.publicUrl,
    basePath: config.basePath,
    processors: config.processors,
    pageTokenSecret: config.pageTokenSecret ?? randomBytes(32).toString("base64url"),
    maxBodyBytes: config.maxBodyBytes,
  });
  const server = await listen(handler, { host: config.host, port: config.port });
  logger.info({ url: server.url, basePath: config.basePath, store: "memory" }, "payment intent service listening");

  if (demo) {
    const key = apiKeys[0]!.key;
    // Printed to the terminal once, never logged: it is a credential.
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

  const stop = () => {
    server.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

await main();
