import type { ServiceMetrics } from "./service-metrics.js";

/**
 * instrumentStore decorates a store (any port: PaymentIntentStore,
 * SettlementAccountStore, ApiKeyVerifier, …) so that every method call is
 * timed into payments_store_call_duration_seconds{store, operation, outcome}.
 * It wraps whatever methods the object has, once, when it is built (a port
 * that grows a method is timed without this file changing, and the
 * implementations never know); a call then costs two clock reads and one
 * observation of a histogram child bound to its labels. A call that throws
 * or rejects counts as "error" and the error passes through unchanged.
 */
export function instrumentStore<T extends object>(store: T, name: string, metrics: Pick<ServiceMetrics, "storeTimer">): T {
  // Everything that is not a method (and is not wrapped) reads through to the store.
  const wrapped = Object.create(store) as Record<string, unknown>;
  for (const key of methodNames(store)) {
    const method = (store as Record<string, (...args: unknown[]) => unknown>)[key]!;
    const record = metrics.storeTimer(name, key);
    wrapped[key] = function (...args: unknown[]) {
      const started = performance.now();
      let result: unknown;
      try {
        result = method.apply(store, args);
      } catch (error) {
        record((performance.now() - started) / 1000, false);
        throw error;
      }
      if (!(result instanceof Promise)) {
        record((performance.now() - started) / 1000, true);
        return result;
      }
      return result.then(
        (resolved) => {
          record((performance.now() - started) / 1000, true);
          return resolved;
        },
        (error: unknown) => {
          record((performance.now() - started) / 1000, false);
          throw error;
        },
      );
    };
  }
  return wrapped as T;
}

/** Every function-valued property of the object and its prototypes (but Object's own). */
function methodNames(store: object): string[] {
  const names = new Set<string>();
  for (let proto: object | null = store; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key !== "constructor" && typeof (store as Record<string, unknown>)[key] === "function") names.add(key);
    }
  }
  return [...names];
}
