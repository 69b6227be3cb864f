import type { Config } from "../config.js";
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

/** isLoopback: 127.0.0.0/8, ::1 (also IPv4-mapped) and localhost, which only this machine can reach. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
