import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../../lib/logger.js";

/**
 * createInternalErrorInterceptor keeps unexpected failures private: Connect
 * would send a plain Error's message to the client, which can carry internals
 * (SQL, file paths). Expected failures are ConnectErrors and pass through; the
 * rest are logged and become Internal "internal error", with the original as
 * cause.
 */
export function createInternalErrorInterceptor(logger: Logger): Interceptor {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      if (error instanceof ConnectError && error.code !== Code.Internal && error.code !== Code.Unknown) throw error;
      logger.error({ procedure: request.url, err: describe(error) }, "unexpected error in RPC handler");
      throw new ConnectError("internal error", Code.Internal, undefined, undefined, error);
    }
  };
}

function describe(error: unknown): Record<string, unknown> {
  return error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
}
