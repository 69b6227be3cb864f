import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import net from "node:net";
import { after, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { Redis } from "ioredis";
import { createSystemClock } from "../../src/lib/clock.js";
import type { Logger } from "../../src/lib/logger.js";
import { createLimiters, type Limiters, type LimitsConfig } from "../../src/limits/create-limiters.js";
import type { RateLimiter } from "../../src/limits/rate-limiter.js";
import { freePort, keysUnder, randomPrefix, redisServerMissing, startOwnRedis, waitFor, type OwnRedis } from "../support/redis.js";

const clock = createSystemClock();
const key = createHash("sha256").update("sk_test_outage_key").digest("hex");

/** captureLog keeps every line the limiters log. */
function captureLog() {
  const lines: { level: "info" | "warn" | "error"; message: string; fields: Record<string, unknown> }[] = [];
  const log: Logger = {
    info: (fields, message) => lines.push({ level: "info", message, fields }),
    warn: (fields, message) => lines.push({ level: "warn", message, fields }),
    error: (fields, message) => lines.push({ level: "error", message, fields }),
  };
  return { log, lines, messages: () => lines.map((line) => `${line.level}: ${line.message}`) };
}

function config(url: string): LimitsConfig {
  return {
    rateLimit: { ratePerSecond: 2, burst: 2 },
    failedAuth: { perMinute: 60, burst: 60 },
    redis: { url, keyPrefix: randomPrefix() },
  };
}

/** timedConsume consumes once and says how long the answer took. */
async function timedConsume(limiter: RateLimiter, k = key) {
  const started = performance.now();
  const decision = await limiter.consume(k);
  return { decision, ms: performance.now() - started };
}

const degradedMessage = "error: Redis is unreachable: rate limits fall back to each instance's memory";
const recoveredMessage = "info: Redis is back: rate limits are shared again";

describe("rate limits when Redis cannot be reached at start", () => {
  it("starts on memory at once when the port refuses, says why, and answers every request within 100 ms", async () => {
    const port = await freePort();
    const capture = captureLog();
    const started = performance.now();
    const limiters = await createLimiters(config(`redis://127.0.0.1:${port}`), { clock, log: capture.log });
    try {
      assert.ok(performance.now() - started < 1000, `createLimiters took ${performance.now() - started} ms`);
      const state = limiters.describe();
      assert.equal(state.backend, "memory");
      assert.ok(state.backend === "memory" && state.degraded, "degraded must be set");
      assert.match(state.degraded.reason, /ECONNREFUSED/);
      assert.ok(state.degraded.since instanceof Date);
      assert.deepEqual(capture.messages(), [degradedMessage]);
      assert.match(String(capture.lines[0]!.fields.reason), /ECONNREFUSED/);

      // The memory bucket decides: a burst of 2, then refusals; never a wait.
      const answers = [];
      for (let i = 0; i < 20; i++) answers.push(await timedConsume(limiters.apiKeys!));
      assert.deepEqual(
        answers.slice(0, 3).map((a) => a.decision.allowed),
        [true, true, false],
      );
      const slowest = Math.max(...answers.map((a) => a.ms));
      assert.ok(slowest < 100, `a consume took ${slowest} ms`);
      assert.deepEqual(await limiters.failedAuth.check("192.0.2.1"), { allowed: true });
      await limiters.failedAuth.recordFailure("192.0.2.1");
      assert.deepEqual(capture.messages(), [degradedMessage], "reported once, however many requests");
    } finally {
      await limiters.close();
    }
  });

  it("gives up on a server that accepts the connection but never answers, within the connect timeout", async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const capture = captureLog();
    const started = performance.now();
    const limiters = await createLimiters(config(`redis://127.0.0.1:${port}`), {
      clock,
      log: capture.log,
      redisTimeouts: { connectTimeoutMs: 300 },
    });
    try {
      const took = performance.now() - started;
      assert.ok(took < 1500, `createLimiters took ${took} ms`);
      const state = limiters.describe();
      assert.ok(state.backend === "memory" && state.degraded, JSON.stringify(state));
      assert.deepEqual(capture.messages(), [degradedMessage]);
      const answer = await timedConsume(limiters.apiKeys!);
      assert.deepEqual(answer.decision, { allowed: true });
      assert.ok(answer.ms < 100, `consume took ${answer.ms} ms`);
    } finally {
      await limiters.close();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});

describe("rate limits when Redis goes away mid-run", { skip: redisServerMissing() }, () => {
  let redis: OwnRedis;
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    await Promise.all(cleanups.map((cleanup) => cleanup()));
    await redis?.stop();
  });

  async function start(): Promise<{ limiters: Limiters; capture: ReturnType<typeof captureLog>; prefix: string }> {
    redis ??= await startOwnRedis();
    const capture = captureLog();
    const settings = config(redis.url);
    const limiters = await createLimiters(settings, {
      clock,
      log: capture.log,
      redisTimeouts: { commandTimeoutMs: 200, probeIntervalMs: 100 },
    });
    cleanups.push(() => limiters.close());
    assert.deepEqual(limiters.describe(), { backend: "redis" });
    assert.deepEqual(capture.messages(), ["info: rate limits are shared through Redis"]);
    return { limiters, capture, prefix: settings.redis!.keyPrefix };
  }

  it("falls back to memory when the server is killed, reports it once, and uses Redis again once it is back", async () => {
    const { limiters, capture, prefix } = await start();
    const apiKeys = limiters.apiKeys!;
    assert.deepEqual(await apiKeys.consume(key), { allowed: true });
    assert.deepEqual(await keysUnder(redis.url, prefix), [`${prefix}:api-key:${key}`]);

    await redis.kill();
    const during = [];
    for (let i = 0; i < 10; i++) during.push(await timedConsume(apiKeys, createHash("sha256").update(`k${i}`).digest("hex")));
    const slowest = Math.max(...during.map((a) => a.ms));
    assert.ok(slowest < 100, `a consume took ${slowest} ms while Redis was down`);
    assert.ok(during.every((a) => a.decision.allowed), "fresh keys have a full bucket in memory");
    await waitFor(() => limiters.describe().backend === "memory", 2000, "falling back to memory");
    const state = limiters.describe();
    assert.ok(state.backend === "memory" && state.degraded, JSON.stringify(state));
    assert.deepEqual(capture.messages().slice(1), [degradedMessage]);

    await redis.start();
    await waitFor(() => limiters.describe().backend === "redis", 5000, "using Redis again");
    assert.deepEqual(capture.messages().slice(1), [degradedMessage, recoveredMessage]);
    assert.equal(typeof capture.lines.at(-1)!.fields.degradedForMs, "number");

    // Decisions come from the new (empty) server again; the probe left its own key.
    assert.deepEqual(await apiKeys.consume(key), { allowed: true });
    assert.deepEqual(await keysUnder(redis.url, prefix), [`${prefix}:api-key:${key}`, `${prefix}:health`]);
  });

  it("waits at most the command timeout once when the server hangs, then answers from memory until it answers again", async () => {
    const { limiters, capture } = await start();
    const apiKeys = limiters.apiKeys!;
    assert.deepEqual(await apiKeys.consume(key), { allowed: true });

    redis.freeze();
    try {
      const first = await timedConsume(apiKeys);
      assert.ok(first.ms < 200 + 250, `the first consume against a hung Redis took ${first.ms} ms`);
      const state = limiters.describe();
      assert.ok(state.backend === "memory" && state.degraded, JSON.stringify(state));
      assert.match(state.degraded.reason, /took longer than 200 ms/);
      const next = [];
      for (let i = 0; i < 10; i++) next.push(await timedConsume(apiKeys));
      const slowest = Math.max(...next.map((a) => a.ms));
      assert.ok(slowest < 50, `with the breaker open a consume took ${slowest} ms`);
    } finally {
      redis.thaw();
    }
    await waitFor(() => limiters.describe().backend === "redis", 5000, "using Redis again");
    assert.deepEqual(capture.messages().slice(1), [degradedMessage, recoveredMessage]);
  });
});

describe("rate limits when Redis answers PING but refuses the limiters' script", { skip: redisServerMissing() }, () => {
  it("stays degraded (reported once) while the script is refused, and recovers once it is allowed again", async () => {
    const redis = await startOwnRedis();
    const admin = new Redis(redis.url);
    const capture = captureLog();
    const limiters = await createLimiters(config(redis.url), {
      clock,
      log: capture.log,
      redisTimeouts: { commandTimeoutMs: 200, probeIntervalMs: 50 },
    });
    try {
      assert.deepEqual(await limiters.apiKeys!.consume(key), { allowed: true });
      await admin.call("ACL", "SETUSER", "default", "-@scripting");
      assert.equal(await admin.ping(), "PONG");
      assert.deepEqual(await limiters.apiKeys!.consume(key), { allowed: true }, "answered from memory");
      // Twenty probes' worth of time: PING would succeed, the script does not.
      await delay(1000);
      const state = limiters.describe();
      assert.ok(state.backend === "memory" && state.degraded, JSON.stringify(state));
      assert.match(state.degraded.reason, /NOPERM/);
      assert.deepEqual(capture.messages().slice(1), [degradedMessage]);

      await admin.call("ACL", "SETUSER", "default", "+@all");
      await waitFor(() => limiters.describe().backend === "redis", 3000, "using Redis again");
      assert.deepEqual(capture.messages().slice(1), [degradedMessage, recoveredMessage]);
    } finally {
      await limiters.close();
      admin.disconnect();
      await redis.stop();
    }
  });
});
