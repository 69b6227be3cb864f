import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer as startSandbox, type TestServer as Sandbox } from "../../src/testing/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** POST {base}/v2/test-helpers/merchants without a key, as any client of an open sandbox can. */
async function createMerchant(baseUrl: string) {
  const res = await fetch(`${baseUrl}/v2/test-helpers/merchants`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as Record<string, unknown> };
}

describe("the sandbox's merchant creation (TEST_MERCHANTS_MAX)", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({ TEST_MERCHANTS_MAX: 3 });
  });
  after(() => sandbox.close());

  it("makes merchants up to the cap, then answers 409 naming the setting", async () => {
    // The merchant startTestServer made for itself is not the sandbox's clients' to count.
    for (let i = 0; i < 3; i++) assert.equal((await createMerchant(sandbox.baseUrl)).status, 201);
    const refused = await createMerchant(sandbox.baseUrl);
    assert.deepEqual(refused.body, {
      status: 409,
      title: "Conflict",
      message: "this sandbox has made its 3 merchants (TEST_MERCHANTS_MAX): reuse one, or restart the sandbox",
    });
  });
});

describe("the sandbox's merchant creation rate per address, on real time", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({});
  });
  after(() => sandbox.close());

  it("answers 429 with Retry-After past a burst of 100 from one address, and advancing the test clock refills nothing", async () => {
    // 100 at once, then 10 a second: the loop takes long enough to earn a few more.
    let made = 0;
    let refused = await createMerchant(sandbox.baseUrl);
    while (refused.status === 201 && made < 300) {
      made++;
      refused = await createMerchant(sandbox.baseUrl);
    }
    assert.ok(made >= 100 && made < 300, `made ${made} merchants before a refusal`);
    assert.equal(refused.status, 429);
    assert.match(String(refused.body.message), /^too many merchants made from this address: at most 10 a second, bursts of 100; retry after 1 s$/);
    assert.equal(refused.retryAfter, "1");
    await sandbox.helpers.advanceClock(3600);
    // Within the same real second or two: still refused (the bucket refills 10 a second of real time, not of the test clock).
    let refusedAfterAdvance = 0;
    for (let i = 0; i < 30; i++) if ((await createMerchant(sandbox.baseUrl)).status === 429) refusedAfterAdvance++;
    assert.ok(refusedAfterAdvance > 0, "advancing the test clock refilled the merchant bucket");
  });
});

describe("the failed-auth throttle in the sandbox, on real time", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({ AUTH_FAILURES_PER_MINUTE: 1, AUTH_FAILURES_BURST: 2 });
  });
  after(() => sandbox.close());

  const list = (key: string) => fetch(`${sandbox.baseUrl}/v2/payment-intents`, { headers: { authorization: `Bearer ${key}` } }).then((res) => res.status);

  it("keeps an address blocked when any merchant advances the test clock", async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await list(`sk_test_made_up_${i}_0123456789`));
    // Two failures are the burst; the third is refused by the budget and blocks the address.
    assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
    await sandbox.helpers.advanceClock(24 * 3600);
    assert.equal(await list("sk_test_made_up_after_the_advance"), 429);
    // The merchant itself was never blocked.
    assert.equal(await list(sandbox.apiKey), 200);
  });
});

describe("the test helpers with TEST_HELPERS=false, over Connect", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it("answers a Connect call with Connect's unimplemented error naming the setting, not a REST 404 body", async () => {
    for (const [method, body] of [["CreateMerchant", "{}"], ["AdvanceClock", '{"seconds":"60"}']] as const) {
      const res = await fetch(`${server.url}/payments.v2.TestHelperService/${method}`, {
        method: "POST",
        headers: { "content-type": "application/json", "connect-protocol-version": "1" },
        body,
      });
      assert.equal(res.status, 501, method);
      assert.deepEqual(await res.json(), {
        code: "unimplemented",
        message: "the test helpers are off: start the service with TEST_HELPERS=true (a sandbox only)",
      });
    }
    // REST has no such route, as for any other path.
    assert.equal((await fetch(`${server.restUrl}/v2/test-helpers/merchants`, { method: "POST", body: "{}" })).status, 404);
  });
});

