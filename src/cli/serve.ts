import { ConfigError, readConfig, type Config } from "../config.js";
import { createPinoLogger } from "../observability/pino-logger.js";
import { readOpenFileLimit } from "../listener/open-file-limit.js";
import { createShutdown } from "../server/shutdown.js";
import { composeService } from "../server/compose-service.js";
import { describeStartFailure } from "./start-failure.js";
import { watchParent } from "./watch-parent.js";

/** The process's environment, as serve() reads it. */
export type Environment = Record<string, string | undefined>;

/**
 * serve runs the service as a process: it reads the configuration from env
 * (a bad value exits 2 with a one-line message), starts the service, prints
 * the demo key when it made one, and stops gracefully on SIGTERM and SIGINT.
 * `npm start` (src/main.ts) and `payment-intents serve` (the package's bin)
 * both run it, so the installed command starts exactly what the checkout does.
 */
export async function serve(env: Environment): Promise<void> {
  const parent = process.ppid;
  let config: Config;
  try {
    config = readConfig(env, { openFileLimit: readOpenFileLimit() });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }

  // Pretty lines for a person at a terminal, JSON lines for a log collector.
  const logger = createPinoLogger({ level: config.logLevel, pretty: process.stderr.isTTY });
  // The log is written asynchronously: every way out of the process writes what is buffered first.
  const exit = (code: number): never => {
    logger.flush();
    process.exit(code);
  };
  process.on("uncaughtException", (error) => {
    logger.error({ err: { name: error.name, message: error.message, stack: error.stack } }, "uncaught exception; exiting");
    exit(1);
  });

  let service;
  try {
    service = await composeService(config, { logger, processMetrics: true, deliveryThreadLog: { level: config.logLevel, pretty: process.stderr.isTTY } });
  } catch (error) {
    // The port, the database or a migration: one line with the cause and the fix, as for a bad setting.
    const line = describeStartFailure(error, config);
    if (line === undefined) throw error;
    logger.flush();
    process.stderr.write(`start-up error: ${line}\n`);
    process.exit(1);
  }
  const { server } = service;
  if (service.demoKey) {
    const key = service.demoKey;
    process.stdout.write(
      [
        "",
        `Payment Intent service on ${server.url} (gRPC, gRPC-Web, Connect and REST under ${config.basePath || "/"})`,
        `No API_KEYS set: demo merchant "demo" with API key ${key}`,
        "Try:",
        `  curl -s -X POST ${server.url}${config.basePath}/v2/payment-intents \\`,
        `    -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' \\`,
        // Not README's readme-1 nor the docs page's order-1001: trying each in turn never meets a 409.
        `    -d '{"amount": 50000, "customerEmail": "ada@example.com", "clientReference": "first-run-1"}'`,
        `Docs, with a try-it-out page: ${server.url}${config.basePath}/docs`,
        ...(service.testHelpers
          ? [`Test helpers on (${server.url}${config.basePath}/v2/test-helpers/…): see the README, "Testing your integration"`]
          : []),
        "",
      ].join("\n"),
    );
  }

  const shutdown = createShutdown({
    readiness: service.readiness,
    server,
    closeStores: () => service.closeStores(),
    ...config.shutdown,
    logger,
    exit,
  });
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  // Started by a package manager (npx, npm start, yarn, pnpm: each sets npm_config_user_agent): when the
  // wrapper a shell's kill reached is gone, stop too.
  if (env.npm_config_user_agent !== undefined) watchParent(parent, () => void shutdown("the npm process that started the service exited"));
}
