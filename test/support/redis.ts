import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { Redis } from "ioredis";
import { freePort } from "./ports.js";

export { freePort };

/**
 * Where the Redis suites connect: TEST_REDIS_URL, or the local server this
 * project's machines run (.ci/run starts it when it is down).
 */
export const testRedisUrl = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";

let availability: Promise<string | undefined> | undefined;

/**
 * redisUnavailable resolves to undefined when Redis answers PING, else to the
 * reason. With REQUIRE_REDIS=1 (CI) an absent server is an error instead of a
 * skip, so a broken Redis can never pass as "skipped".
 */
export function redisUnavailable(): Promise<string | undefined> {
  availability ??= (async () => {
    const client = new Redis(testRedisUrl, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    let connectionError: string | undefined;
    client.on("error", (error: Error) => (connectionError ??= error.message));
    try {
      await client.connect();
      await client.ping();
      return undefined;
    } catch (error) {
      const reason = `Redis not reachable at ${new URL(testRedisUrl).host}: ${connectionError ?? (error as Error).message}`;
      if (process.env.REQUIRE_REDIS === "1") throw new Error(`${reason} (REQUIRE_REDIS=1)`);
      process.stderr.write(`# skipping Redis tests: ${reason}. Start redis-server on 127.0.0.1:6379 or set TEST_REDIS_URL.\n`);
      return reason;
    } finally {
      client.disconnect();
    }
  })();
  return availability;
}

/** randomPrefix keeps each test's keys apart from every other run's. */
export const randomPrefix = () => `test-${randomBytes(6).toString("hex")}`;

/** keysUnder lists the Redis keys that start with prefix (SCAN, never KEYS). */
export async function keysUnder(url: string, prefix: string): Promise<string[]> {
  const client = new Redis(url, { maxRetriesPerRequest: 0 });
  try {
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== "0");
    return keys.sort();
  } finally {
    client.disconnect();
  }
}

/** OwnRedis is a redis-server a test starts, kills, freezes and restarts on one port. */
export interface OwnRedis {
  readonly url: string;
  /** SIGKILL: the server vanishes, connections are reset. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is saved). */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server keeps its connections but answers nothing. */
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

/** redisServerMissing says why startOwnRedis cannot run (no redis-server binary), or undefined. */
export function redisServerMissing(): string | undefined {
  const probe = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  if (!probe.error) return undefined;
  const reason = "redis-server is not installed (apt-get install redis-server)";
  if (process.env.REQUIRE_REDIS === "1") throw new Error(`${reason} (REQUIRE_REDIS=1)`);
  process.stderr.write(`# skipping tests that run their own Redis: ${reason}\n`);
  return reason;
}

/** startOwnRedis runs redis-server on a free port of 127.0.0.1, without persistence. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const started = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
    child = started;
    for (let attempt = 0; ; attempt++) {
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on("error", () => {});
      try {
        await client.connect();
        await client.ping();
        return;
      } catch (error) {
        if (attempt > 100 || started.exitCode !== null) throw new Error(`redis-server on port ${port} did not start: ${(error as Error).message}`);
        await delay(50);
      } finally {
        client.disconnect();
      }
    }
  }

  async function kill(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGCONT");
    running.kill("SIGKILL");
    await exited;
  }

  await start();
  return {
    url,
    kill,
    start,
    freeze: () => child?.kill("SIGSTOP"),
    thaw: () => child?.kill("SIGCONT"),
    stop: kill,
  };
}

/** waitFor polls condition every 20 ms until it holds, or fails after ms. */
export async function waitFor(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await delay(20);
  }
}
