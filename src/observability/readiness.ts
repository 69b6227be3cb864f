import type { StoreHealth, StoreState } from "../store/store-health.js";

/** What /readyz reports beside the verdict: the instance's own state, its store's, and whatever else was plugged in. */
export interface ReadinessDetail {
  /** "ready", or the reason's short name: "starting", "draining", "migrations pending", "store unreachable". */
  state: string;
  /** The store's view of its storage, with the grace after which unreachability makes the instance not ready. */
  store: StoreState & { notReadyAfterMs: number };
  /** The ReadinessOptions.details, each read at this check. */
  [name: string]: unknown;
}

/** ReadinessState is the answer to "may this instance receive traffic now?", with what it was decided from. */
export type ReadinessState =
  | { ready: true; detail: ReadinessDetail }
  | { ready: false; reason: string; detail: ReadinessDetail };

/**
 * Readiness is the one source of truth behind GET /readyz and the gRPC health
 * service, so load balancers and gRPC clients always see the same answer.
 */
export interface Readiness {
  /** Decides from what is known now: never waits for the store. */
  check(): ReadinessState;
  /** Ends the "starting" phase: everything the service needs is in place. */
  started(): void;
  /** Marks the instance as shutting down: never ready again, whatever the store says. */
  beginShutdown(): void;
  readonly shuttingDown: boolean;
}

export interface ReadinessOptions {
  store: StoreHealth;
  /**
   * How long the store may be unreachable (DB_UNREADY_AFTER_MS) before the
   * instance says it is not ready; default 30 s. Shorter outages are shared
   * by every instance on the same database: taking them all out of the
   * balancer would turn the API's 503 with Retry-After into the balancer's
   * own error, and bring them back only after its rise checks.
   */
  unreachableGraceMs?: number;
  /** Least time between two probes of an unreachable store (default 1 s), however many checks arrive. */
  probeIntervalMs?: number;
  /** Begin in the "starting" phase, not ready until started() (default false). */
  starting?: boolean;
  /** More for /readyz detail, each read at every check: settings findings, the rate-limit backend, and so on. */
  details?: Readonly<Record<string, () => unknown>>;
  /** Monotonic milliseconds, for spacing probes; performance.now by default. */
  now?: () => number;
  /** Told whenever the verdict changes (for the log). */
  onChange?(state: ReadinessState): void;
}

export const defaultUnreachableGraceMs = 30_000;

export const notReadyReasons = {
  starting: "the server is starting",
  shuttingDown: "the server is shutting down",
  migrationsPending: "database migrations are pending: apply them (npm run db:migrate)",
  storeUnreachable: (graceMs: number) => `the store has been unreachable for longer than ${formatSeconds(graceMs)}`,
} as const;

/**
 * createReadiness says whether this instance should receive traffic, for its
 * own reasons only: it is starting, it is draining (shutting down), the
 * database lacks migrations this code needs, or its store has been
 * unreachable for longer than the grace. It reads the store's state and sends
 * nothing to the database, so a slow or blocked query, a full pool or one
 * failed connection never flips it, and a flood of probes (they need no key)
 * costs no queries. While the store is unreachable it asks the store to
 * probe, at most once per probeIntervalMs, so that an instance the balancer
 * took out notices the database's return without traffic.
 */
export function createReadiness(options: ReadinessOptions): Readiness {
  const graceMs = options.unreachableGraceMs ?? defaultUnreachableGraceMs;
  const probeIntervalMs = options.probeIntervalMs ?? 1000;
  const now = options.now ?? (() => performance.now());
  let starting = options.starting ?? false;
  let shuttingDown = false;
  let probing = false;
  let lastProbeAt = -Infinity;
  let lastVerdict: string | undefined;

  function probeIfUnreachable(store: StoreState): void {
    if (store.reachable || probing || now() - lastProbeAt < probeIntervalMs) return;
    probing = true;
    lastProbeAt = now();
    void options.store.probe().finally(() => {
      probing = false;
    });
  }

  function reasonOf(store: StoreState): { state: string; reason: string } | undefined {
    if (shuttingDown) return { state: "draining", reason: notReadyReasons.shuttingDown };
    if (starting) return { state: "starting", reason: notReadyReasons.starting };
    // Unknown (the check could not read them) does not hold the instance back.
    if (store.pendingMigrations !== undefined && store.pendingMigrations.length > 0) {
      return { state: "migrations pending", reason: notReadyReasons.migrationsPending };
    }
    if (!store.reachable && store.unreachableForMs > graceMs) {
      return { state: "store unreachable", reason: notReadyReasons.storeUnreachable(graceMs) };
    }
    return undefined;
  }

  return {
    get shuttingDown() {
      return shuttingDown;
    },
    started() {
      starting = false;
    },
    beginShutdown() {
      shuttingDown = true;
    },
    check() {
      const store = options.store.state();
      probeIfUnreachable(store);
      const notReady = reasonOf(store);
      const extra = Object.fromEntries(Object.entries(options.details ?? {}).map(([name, read]) => [name, read()]));
      const detail: ReadinessDetail = { ...extra, state: notReady?.state ?? "ready", store: { ...store, notReadyAfterMs: graceMs } };
      const state: ReadinessState = notReady ? { ready: false, reason: notReady.reason, detail } : { ready: true, detail };
      if (detail.state !== lastVerdict) {
        lastVerdict = detail.state;
        options.onChange?.(state);
      }
      return state;
    },
  };
}

function formatSeconds(ms: number): string {
  return `${ms / 1000} s`;
}
