import type { Clock } from "../lib/clock.js";
import type { StoreHealth } from "../store/store-health.js";

/** ReadinessState is the answer to "may this instance receive traffic now?". */
export type ReadinessState = { ready: true } | { ready: false; reason: string };

/**
 * Readiness is the one source of truth behind GET /readyz and the gRPC health
 * service, so load balancers and gRPC clients always see the same answer.
 */
export interface Readiness {
  check(): Promise<ReadinessState>;
  /** Marks the instance as shutting down: never ready again, whatever the store says. */
  beginShutdown(): void;
  readonly shuttingDown: boolean;
}

export interface ReadinessOptions {
  store: StoreHealth;
  clock: Clock;
  /** Longest a check waits for the store before counting it unreachable. */
  timeoutMs: number;
  /**
   * How long one store answer is reused. Probes need no key, so without this
   * anyone could turn a flood of /readyz into a flood of database queries.
   */
  cacheMs?: number;
  /** Told why the store failed a check (for the log); the client only sees the reason. */
  onStoreFailure?(error: unknown): void;
}

export const notReadyReasons = {
  shuttingDown: "the server is shutting down",
  storeUnreachable: "the store is unreachable",
} as const;

/**
 * createReadiness pings the store at most once per cacheMs (concurrent checks
 * share one ping) and answers not ready as soon as shutdown begins.
 */
export function createReadiness(options: ReadinessOptions): Readiness {
  const cacheMs = options.cacheMs ?? 1000;
  let shuttingDown = false;
  let last: { at: number; state: ReadinessState } | undefined;
  let pending: Promise<ReadinessState> | undefined;

  async function pingStore(): Promise<ReadinessState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`store ping took longer than ${options.timeoutMs} ms`)), options.timeoutMs);
      timer.unref();
    });
    try {
      await Promise.race([options.store.ping(), timeout]);
      return { ready: true };
    } catch (error) {
      options.onStoreFailure?.(error);
      return { ready: false, reason: notReadyReasons.storeUnreachable };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    get shuttingDown() {
      return shuttingDown;
    },
    beginShutdown() {
      shuttingDown = true;
    },
    async check() {
      if (shuttingDown) return { ready: false, reason: notReadyReasons.shuttingDown };
      const now = options.clock.now().getTime();
      if (last && now - last.at < cacheMs) return last.state;
      pending ??= pingStore().then((state) => {
        last = { at: options.clock.now().getTime(), state };
        pending = undefined;
        return state;
      });
      const state = await pending;
      // Shutdown may have begun while the store was asked.
      return shuttingDown ? { ready: false, reason: notReadyReasons.shuttingDown } : state;
    },
  };
}
