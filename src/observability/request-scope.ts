import { AsyncLocalStorage } from "node:async_hooks";
import type { ApiKeyVerifier } from "../auth/api-key-verifier.js";
import type { Logger } from "../lib/logger.js";

/** RequestInfo is what is known about the request being served, filled in as it is learnt. */
export interface RequestInfo {
  readonly requestId: string;
  /** Set once the API key has been verified. */
  merchantId?: string;
}

/**
 * RequestScope carries the current request's RequestInfo through everything
 * that serves it. The merchant is learnt deep inside whichever transport
 * serves the request (REST gateway, Connect interceptor) and error lines are
 * written there too; a scope lets the request log and those lines share the
 * request id and merchant without every transport passing them along. One
 * scope per app (AsyncLocalStorage instance), never a module singleton.
 */
export interface RequestScope {
  run<T>(info: RequestInfo, fn: () => T): T;
  /** The request being served, or undefined outside a request (start-up, timers). */
  current(): RequestInfo | undefined;
}

/** createRequestScope makes the scope of one app: an AsyncLocalStorage of its own. */
export function createRequestScope(): RequestScope {
  const storage = new AsyncLocalStorage<RequestInfo>();
  return {
    run: (info, fn) => storage.run(info, fn),
    current: () => storage.getStore(),
  };
}

/** scopedLogger adds the current request's id (and merchant, once known) to every line written while serving it. */
export function scopedLogger(logger: Logger, scope: RequestScope): Logger {
  const withRequest = (fields: Record<string, unknown>) => {
    const info = scope.current();
    if (!info) return fields;
    return info.merchantId === undefined
      ? { requestId: info.requestId, ...fields }
      : { requestId: info.requestId, merchantId: info.merchantId, ...fields };
  };
  return {
    info: (fields, message) => logger.info(withRequest(fields), message),
    error: (fields, message) => logger.error(withRequest(fields), message),
  };
}

/**
 * merchantRecordingVerifier notes the merchant a key belongs to in the
 * current request's info: every transport authenticates through the verifier,
 * so this is the one place that sees the merchant for all of them.
 */
export function merchantRecordingVerifier(verifier: ApiKeyVerifier, scope: RequestScope): ApiKeyVerifier {
  return {
    async verify(key) {
      const principal = await verifier.verify(key);
      const info = scope.current();
      if (principal && info) info.merchantId = principal.merchantId;
      return principal;
    },
  };
}
