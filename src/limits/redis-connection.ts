import { Redis } from "ioredis";
import type { Clock } from "../lib/clock.js";
import type { LimiterDegradation, LimiterState } from "./rate-limiter.js";

/** RedisStateChange is told once per transition: Redis lost (limits fall back to memory) or back. */
export type RedisStateChange =
  | { kind: "degraded"; reason: string; since: Date }
  | { kind: "recovered"; degradedForMs: number };

export interface RedisConnectionOptions {
  /** redis:// or rediss:// URL; may carry a password, so it is never logged or put in a reason. */
  url: string;
  clock: Clock;
  /** Told of each transition once, for the log. */
  onChange?(change: RedisStateChange): void;
  /**
   * Longest a limiter waits for Redis before it answers from memory (see
   * settleWithin). ioredis itself gives up on a command after 5 × this, so
   * a hung server cannot pile up commands.
   */
  commandTimeoutMs?: number;
  /** Longest a connection attempt may take. */
  connectTimeoutMs?: number;
  /** While degraded, how often Redis is asked whether it is back. */
  probeIntervalMs?: number;
  /**
   * How Redis is asked: it must do what the limiters do (see
   * createRedisProbe), or a Redis that answers PING but refuses their script
   * (an ACL, OOM, a read-only replica) would flap between degraded and back.
   * Default: PING.
   */
  probe?(client: Redis): Promise<unknown>;
}

/**
 * RedisConnection is the one Redis client the shared limiters use, with a
 * circuit breaker around it: while Redis is healthy the limiters ask it;
 * once it is lost (connection closed, refused, or a command failed or timed
 * out) usable() turns false and the limiters answer from memory without
 * touching Redis, so no request waits on a dead server; a probe every
 * probeIntervalMs (and at each reconnection) tells when it is back.
 */
export interface RedisConnection {
  readonly client: Redis;
  /** Longest a limiter waits for Redis before it answers from memory. */
  readonly commandTimeoutMs: number;
  /** Whether limiters should ask Redis now. False while connecting and while degraded. */
  usable(): boolean;
  state(): LimiterState;
  /** A limiter's Redis call failed or was late (its memory fallback answered): open the breaker. */
  reportFailure(reason?: string): void;
  /** Settles once the first connection attempt has succeeded or failed (bounded by the connect timeout). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** The defaults: Redis answers in well under a millisecond on a LAN; a stalled event loop must not count as an outage. */
export const defaultRedisTimeouts = { commandTimeoutMs: 200, connectTimeoutMs: 1000, probeIntervalMs: 1000 } as const;

type Phase = { name: "connecting" } | { name: "healthy" } | { name: "degraded"; degradation: LimiterDegradation };

/**
 * createRedisConnection connects at once. ioredis is set up so that nothing
 * waits: no offline queue (a command while disconnected fails at once), no
 * retries of a command across reconnects, a command timeout (a backstop:
 * limiters stop waiting long before), and a reconnect every 0.1–1 s for as
 * long as the process lives.
 */
export function createRedisConnection(options: RedisConnectionOptions): RedisConnection {
  const commandTimeoutMs = options.commandTimeoutMs ?? defaultRedisTimeouts.commandTimeoutMs;
  const connectTimeoutMs = options.connectTimeoutMs ?? defaultRedisTimeouts.connectTimeoutMs;
  const probeIntervalMs = options.probeIntervalMs ?? defaultRedisTimeouts.probeIntervalMs;
  const { clock } = options;
  const startedAt = clock.now();

  const client = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: connectTimeoutMs,
    commandTimeout: 5 * commandTimeoutMs,
    retryStrategy: (attempt) => Math.min(100 * attempt, 1000),
  });

  let phase: Phase = { name: "connecting" };
  let lastError: string | undefined;
  let closing = false;
  let probeTimer: NodeJS.Timeout | undefined;
  let probing = false;
  let settleReady: () => void = () => {};
  const firstAttempt = new Promise<void>((resolve) => (settleReady = resolve));

  function degrade(reason: string): void {
    if (closing) return;
    if (phase.name === "degraded") {
      // Already reported: keep "since", show the latest cause.
      phase.degradation.reason = reason;
      return;
    }
    const since = clock.now();
    phase = { name: "degraded", degradation: { reason, since } };
    settleReady();
    options.onChange?.({ kind: "degraded", reason, since });
    probeTimer ??= setInterval(() => void probe(), probeIntervalMs);
    probeTimer.unref();
  }

  function recover(): void {
    if (closing || phase.name === "healthy") return;
    const was = phase;
    phase = { name: "healthy" };
    lastError = undefined;
    clearInterval(probeTimer);
    probeTimer = undefined;
    settleReady();
    if (was.name === "degraded") {
      options.onChange?.({ kind: "recovered", degradedForMs: clock.now().getTime() - was.degradation.since.getTime() });
    }
  }

  const ask = options.probe ?? ((redis: Redis) => redis.ping());

  /** A probe that succeeds is the only proof that Redis serves the limiters again (a hung server keeps its connection). */
  async function probe(): Promise<void> {
    if (probing || closing || client.status !== "ready") return;
    probing = true;
    try {
      await ask(client);
      recover();
    } catch (error) {
      lastError = describeError(error);
      if (phase.name === "degraded") phase.degradation.reason = `Redis failed the health probe: ${lastError}`;
    } finally {
      probing = false;
    }
  }

  function connectionReason(): string {
    const cause = lastError ? `: ${lastError}` : "";
    return `Redis connection is ${client.status === "ready" ? "lost" : client.status}${cause}`;
  }

  // ioredis reports connection errors as events; a listener is required, or they reach stderr.
  client.on("error", (error: unknown) => {
    lastError = describeError(error);
  });
  client.on("ready", () => {
    if (phase.name === "connecting") recover();
    else void probe();
  });
  client.on("close", () => {
    if (phase.name !== "degraded") degrade(connectionReason());
  });

  const connectDeadline = setTimeout(() => {
    if (phase.name === "connecting") degrade(`Redis did not connect within ${connectTimeoutMs} ms`);
  }, connectTimeoutMs + 100);
  connectDeadline.unref();

  return {
    client,
    commandTimeoutMs,
    usable: () => phase.name === "healthy",
    state() {
      if (phase.name === "healthy") return { backend: "redis" };
      if (phase.name === "connecting") return { backend: "memory", degraded: { reason: "connecting to Redis", since: startedAt } };
      return { backend: "memory", degraded: { ...phase.degradation } };
    },
    reportFailure(reason) {
      if (phase.name !== "healthy") return;
      degrade(reason ?? (client.status === "ready" ? "a Redis command failed" : connectionReason()));
    },
    ready: () => firstAttempt,
    async close() {
      closing = true;
      clearTimeout(connectDeadline);
      clearInterval(probeTimer);
      settleReady();
      client.disconnect();
    },
  };
}

/** describeError keeps an error's message only: never a URL or a stack. */
function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
