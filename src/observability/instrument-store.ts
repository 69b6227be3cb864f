import type { ServiceMetrics } from "./service-metrics.js";

/**
 * instrumentStore decorates a store (any port: PaymentIntentStore,
 * SettlementAccountStore, ApiKeyVerifier, …) so that every method call is
 * timed into payments_store_call_duration_seconds{store, operation, outcome}.
 * It wraps whatever methods the object has, through a Proxy, instead of
 * listing the interface's methods: a port that grows a method is timed
 * without this file changing, and the implementations never know. A call that
 * throws or rejects counts as "error" and the error passes through unchanged.
 */
export function instrumentStore<T extends object>(store: T, name: string, metrics: Pick<ServiceMetrics, "recordStoreCall">): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || typeof property !== "string") return value;
      let timed = wrapped.get(property);
      if (!timed) {
        timed = function (this: unknown, ...args: unknown[]) {
          const started = performance.now();
          const record = (ok: boolean) => metrics.recordStoreCall(name, property, (performance.now() - started) / 1000, ok);
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(this === receiver ? target : this, args);
          } catch (error) {
            record(false);
            throw error;
          }
          if (result instanceof Promise) {
            return result.then(
              (resolved) => {
                record(true);
                return resolved;
              },
              (error: unknown) => {
                record(false);
                throw error;
              },
            );
          }
          record(true);
          return result;
        };
        wrapped.set(property, timed);
      }
      return timed;
    },
  });
}
