import type { Config } from "../config.js";
import { isLoopback } from "../lib/is-loopback.js";
import type { Logger } from "../lib/logger.js";

/**
 * logTestHelpers says the helpers are on: a warning when the port is reachable
 * from other machines, where anyone could make merchants and mark payments
 * paid without a key of theirs.
 */
export function logTestHelpers(logger: Logger, config: Config): void {
  const fields = { testHelpers: true, testClock: config.testHelpers.clock, host: config.host };
  const routes = `${config.basePath}/v2/test-helpers/…`;
  if (isLoopback(config.host)) {
    logger.info(fields, `test helpers are on (${routes}): a sandbox, not for production`);
  } else {
    logger.warn(
      fields,
      `test helpers are on (${routes}) and HOST ${config.host} is not a loopback address: anyone who reaches this port can create merchants and decide payment outcomes; set TEST_HELPERS=false unless this is a sandbox`,
    );
  }
}
