import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { keysUnder, randomPrefix, redisUnavailable, testRedisUrl } from "../support/redis.js";
import { startServerProcess, type ServerProcess } from "../support/server-process.js";

// The limits as the process reads them from its environment (the all tier:
// each suite starts src/main.ts as a process of its own).

describe("limits set through the environment (src/main.ts)", () => {
  let server: ServerProcess;
  const key = "sk_test_rate_limited_key_1";
  before(async () => {
    server = await startServerProcess({
      apiKeys: `acme:${key}`,
      env: { RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "2", MAX_CONCURRENT_STREAMS: "9" },
    });
  });
  after(() => server.stop());

  it("applies RATE_LIMIT_RPS and RATE_LIMIT_BURST", async () => {
    const list = () => fetch(`${server.url}/v1/v2/settlement-accounts`, { headers: { authorization: `Bearer ${key}` } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await list()).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.equal((await list()).headers.get("retry-after"), "1");
  });

  it("applies MAX_CONCURRENT_STREAMS", async () => {
    const session = http2.connect(server.url);
    try {
      const settings = await new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve));
      assert.equal(settings.maxConcurrentStreams, 9);
    } finally {
      session.destroy();
    }
  });
});

describe("the per-key limit across instances with REDIS_URL (src/main.ts)", { skip: await redisUnavailable() }, () => {
  const key = "sk_test_shared_limit_key_1";
  const prefix = randomPrefix();
  let servers: ServerProcess[] = [];
  before(async () => {
    const env = { RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "3", REDIS_URL: testRedisUrl, REDIS_KEY_PREFIX: prefix };
    // Started together; if one fails to start, the other is stopped too (a live child would keep this file from ending).
    const started = await Promise.allSettled([0, 1].map(() => startServerProcess({ apiKeys: `acme:${key}`, env })));
    servers = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
  });
  after(() => Promise.all(servers.map((server) => server.stop())));

  it("counts a key's requests on every instance against one budget, stored under the prefix by hash", async () => {
    const list = (server: ServerProcess) =>
      fetch(`${server.url}/v1/v2/settlement-accounts`, { headers: { authorization: `Bearer ${key}` } });
    const statuses = [];
    // Alternating instances, as a balancer would: 3 pass in all, not 3 on each.
    for (let i = 0; i < 6; i++) statuses.push((await list(servers[i % 2]!)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
    const keys = await keysUnder(testRedisUrl, prefix);
    assert.equal(keys.length, 1);
    assert.match(keys[0]!, new RegExp(`^${prefix}:api-key:[0-9a-f]{64}$`));
    for (const server of servers) assert.match(server.stderr(), /rate limits are shared through Redis/);
  });
});
