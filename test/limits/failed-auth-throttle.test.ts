import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createSystemClock } from "../../src/lib/clock.js";
import { addressKey, createFailedAuthThrottle, type FailedAuthThrottle } from "../../src/limits/failed-auth-throttle.js";
import { createMemoryRateLimiter } from "../../src/limits/memory-rate-limiter.js";
import { createRedisConnection } from "../../src/limits/redis-connection.js";
import { createRedisRateLimiter } from "../../src/limits/redis-rate-limiter.js";
import { createManualClock } from "../support/manual-clock.js";
import { keysUnder, randomPrefix, redisUnavailable, testRedisUrl } from "../support/redis.js";

/** fail records n failures from address. */
async function fail(throttle: FailedAuthThrottle, address: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await throttle.recordFailure(address);
}

describe("createFailedAuthThrottle (memory)", () => {
  // AUTH_FAILURES_PER_MINUTE=60, AUTH_FAILURES_BURST=3.
  function setUp() {
    const clock = createManualClock();
    const limiter = createMemoryRateLimiter({ ratePerSecond: 1, burst: 3, clock });
    return { clock, throttle: createFailedAuthThrottle({ limiter, clock }) };
  }

  it("lets an address fail its burst, blocks it at the next failure until a token returns, then lets it try again", async () => {
    const { clock, throttle } = setUp();
    await fail(throttle, "192.0.2.1", 3);
    assert.deepEqual(await throttle.check("192.0.2.1"), { allowed: true });
    await fail(throttle, "192.0.2.1", 1);
    assert.deepEqual(await throttle.check("192.0.2.1"), { allowed: false, retryAfterMs: 1000 });
    clock.advance(400);
    assert.deepEqual(await throttle.check("192.0.2.1"), { allowed: false, retryAfterMs: 600 });
    clock.advance(600);
    assert.deepEqual(await throttle.check("192.0.2.1"), { allowed: true });
    // One token came back: one more failure is counted, the next blocks again.
    await fail(throttle, "192.0.2.1", 1);
    assert.deepEqual(await throttle.check("192.0.2.1"), { allowed: true });
    await fail(throttle, "192.0.2.1", 1);
    assert.equal((await throttle.check("192.0.2.1")).allowed, false);
  });

  it("counts IPv4 per address (/32), IPv4-mapped IPv6 as the IPv4 address", async () => {
    const { throttle } = setUp();
    await fail(throttle, "192.0.2.1", 2);
    await fail(throttle, "::ffff:192.0.2.1", 2);
    assert.equal((await throttle.check("192.0.2.1")).allowed, false);
    assert.equal((await throttle.check("::ffff:192.0.2.1")).allowed, false);
    assert.deepEqual(await throttle.check("192.0.2.2"), { allowed: true });
    assert.deepEqual(await throttle.check("198.51.100.1"), { allowed: true });
  });

  it("counts IPv6 per /64: every address of the /64 shares one budget, the next /64 has its own", async () => {
    const { throttle } = setUp();
    await fail(throttle, "2001:db8:1:2::1", 1);
    await fail(throttle, "2001:db8:1:2::2", 1);
    await fail(throttle, "2001:db8:1:2:aaaa:bbbb:cccc:dddd", 1);
    assert.deepEqual(await throttle.check("2001:db8:1:2::9"), { allowed: true });
    await fail(throttle, "2001:db8:1:2:ffff::", 1);
    for (const address of ["2001:db8:1:2::1", "2001:db8:1:2::abcd", "2001:0db8:0001:0002::7"]) {
      assert.equal((await throttle.check(address)).allowed, false, address);
    }
    for (const address of ["2001:db8:1:3::1", "2001:db8:1::1", "2001:db9:1:2::1"]) {
      assert.deepEqual(await throttle.check(address), { allowed: true }, address);
    }
  });

  it("never blocks an address that only checks (successes spend nothing)", async () => {
    const { throttle } = setUp();
    for (let i = 0; i < 100; i++) assert.deepEqual(await throttle.check("192.0.2.1"), { allowed: true });
  });

  it("remembers at most maxBlocked blocked groups", async () => {
    const clock = createManualClock();
    const limiter = createMemoryRateLimiter({ ratePerSecond: 1, burst: 1, clock });
    const throttle = createFailedAuthThrottle({ limiter, clock, maxBlocked: 2 });
    for (const address of ["192.0.2.1", "192.0.2.2", "192.0.2.3"]) await fail(throttle, address, 2);
    assert.deepEqual(
      await Promise.all(["192.0.2.1", "192.0.2.2", "192.0.2.3"].map(async (a) => (await throttle.check(a)).allowed)),
      [true, false, false],
    );
  });
});

describe("createFailedAuthThrottle on Redis, two instances", { skip: await redisUnavailable() }, () => {
  const clock = createSystemClock();
  const prefix = randomPrefix();
  const limit = { ratePerSecond: 1, burst: 60 };
  const connections = [0, 1].map(() => createRedisConnection({ url: testRedisUrl, clock }));
  const [a, b] = connections.map((connection) =>
    createFailedAuthThrottle({
      limiter: createRedisRateLimiter({
        connection,
        keyPrefix: `${prefix}:failed-auth`,
        limit,
        fallback: createMemoryRateLimiter({ ...limit, clock }),
      }),
      clock,
    }),
  ) as [FailedAuthThrottle, FailedAuthThrottle];
  after(() => Promise.all(connections.map((c) => c.close())));

  it("shares one budget: failures on either instance count, and each blocks at its next failure once it is spent", async () => {
    await Promise.all(connections.map((c) => c.ready()));
    assert.deepEqual(a.describe(), { backend: "redis" });
    await fail(a, "2001:db8:7:7::1", 30);
    await fail(b, "2001:db8:7:7::2", 30);
    assert.deepEqual(await a.check("2001:db8:7:7::3"), { allowed: true });
    assert.deepEqual(await b.check("2001:db8:7:7::3"), { allowed: true });
    // The 61st failure in the minute, on either instance, is refused and blocks there.
    await fail(b, "2001:db8:7:7::4", 1);
    const blocked = await b.check("2001:db8:7:7::5");
    assert.ok(!blocked.allowed && blocked.retryAfterMs > 55_000 && blocked.retryAfterMs <= 60_000, JSON.stringify(blocked));
    assert.deepEqual(await a.check("2001:db8:7:7::5"), { allowed: true }, "a learns at its own next failure");
    await fail(a, "2001:db8:7:7::6", 1);
    assert.equal((await a.check("2001:db8:7:7::5")).allowed, false);
    // Another /64 and an IPv4 address are untouched.
    assert.deepEqual(await a.check("2001:db8:7:8::1"), { allowed: true });
    await fail(a, "203.0.113.9", 1);
    assert.deepEqual(await b.check("203.0.113.9"), { allowed: true });

    const keys = await keysUnder(testRedisUrl, prefix);
    assert.deepEqual(keys, [addressKey("2001:db8:7:7::1"), addressKey("203.0.113.9")].map((k) => `${prefix}:failed-auth:${k}`).sort());
    assert.ok(keys.every((k) => !k.includes("2001:db8") && !k.includes("203.0.113")), "addresses are stored as hashes only");
  });
});
