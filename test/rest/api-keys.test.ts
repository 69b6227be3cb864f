import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../support/manual-clock.js";
import { createRestClient, expectError, expectJson, type ApiKeyJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const keyIdPattern = /^key_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const secretPattern = (mode: string) => new RegExp(`^sk_${mode}_[0-9A-Za-z]{36}$`);

describe("REST API keys (issue 23, §2)", () => {
  let server: TestServer;
  let client: RestClient;
  let clock: ManualClock;
  before(async () => {
    clock = createManualClock("2026-12-05T16:00:00.000Z");
    // A live Paystack key: live intents can be made, for the mode checks.
    server = await startTestServer({ clock, settings: { PAYSTACK_SECRET_KEY: "sk_live_7e57000000000000000000000000000000000001" } });
    client = createRestClient(server);
  });
  after(() => server.close());

  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  const create = (body: unknown, key = server.keys["merchantA"]!) => client.request("POST", "/v2/api-keys", { json: body, ...as(key) });
  const listKeys = async (key = server.keys["merchantA"]!) => expectJson<{ apiKeys: ApiKeyJson[] }>(await client.request("GET", "/v2/api-keys", as(key)), 200).apiKeys;
  const roll = (id: string, body: unknown, key = server.keys["merchantA"]!) => client.request("POST", `/v2/api-keys/${id}/roll`, { json: body, ...as(key) });
  const revoke = (id: string, key = server.keys["merchantA"]!) => client.request("DELETE", `/v2/api-keys/${id}`, as(key));
  /** The status a key gets listing intents (payment_intents:read). */
  const readStatus = async (key: string) => (await client.request("GET", "/v2/payment-intents", as(key))).status;

  it("makes a key: 201 with the secret shown once, listed without it, and it works", async () => {
    const made = expectJson<ApiKeyJson>(
      await create({ name: "Shop backend", scopes: ["payment_intents:write"], allowedCidrs: ["127.0.0.0/8"], expiresAt: "2027-01-01T00:00:00.000Z" }),
      201,
    );
    assert.match(made.id, keyIdPattern);
    assert.match(made.secret!, secretPattern("test"));
    assert.deepEqual(made, {
      id: made.id,
      name: "Shop backend",
      mode: "test",
      scopes: ["payment_intents:write"],
      last4: made.secret!.slice(-4),
      createdAt: "2026-12-05T16:00:00.000Z",
      lastUsedAt: null,
      expiresAt: "2027-01-01T00:00:00.000Z",
      allowedCidrs: ["127.0.0.0/8"],
      secret: made.secret,
    });
    assert.equal(await readStatus(made.secret!), 200);
    // lastUsedAt is written in the background: wait for it.
    for (let i = 0; i < 40 && !(await listKeys()).find((k) => k.id === made.id)?.lastUsedAt; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const listed = (await listKeys()).find((k) => k.id === made.id);
    const { secret: _, ...withoutSecret } = made;
    // lastUsedAt: the use above, at the clock's minute.
    assert.deepEqual(listed, { ...withoutSecret, lastUsedAt: "2026-12-05T16:00:00.000Z" });
    // The configured keys are listed too: no name, every scope, mode from the prefix.
    const configured = (await listKeys()).filter((k) => k.id !== made.id);
    assert.deepEqual(configured.map(({ name, mode, scopes, allowedCidrs, expiresAt }) => ({ name, mode, scopes, allowedCidrs, expiresAt })), [
      { name: null, mode: "test", scopes: [], allowedCidrs: [], expiresAt: null },
    ]);
  });

  it("refuses bad input with 400 naming the field, and makes nothing", async () => {
    const before = (await listKeys()).length;
    const cases: [unknown, RegExp][] = [
      [{}, /^name must be 1 to 100 characters of text$/],
      [{ name: "x", mode: "staging" }, /^mode must be test or live$/],
      [{ name: "x", scopes: ["payment_intents:delete"] }, /^scopes\[0\]/],
      [{ name: "x", scopes: ["charges:write"] }, /^scopes\[0\]: "charges:write" is not a scope; the scopes are .*payment_intents:read/],
      [{ name: "x", scopes: ["refunds:write", "refunds:write"] }, /^scopes\[1\]/],
      [{ name: "x", allowedCidrs: ["10.0.0.0/33"] }, /^allowedCidrs\[0\] must be an IPv4 or IPv6 network in CIDR notation/],
      [{ name: "x", allowedCidrs: ["not-an-ip"] }, /^allowedCidrs\[0\]/],
      [{ name: "x", expiresAt: "2026-12-05T15:59:59.000Z" }, /^expiresAt must be in the future$/],
    ];
    for (const [body, message] of cases) expectError(await create(body), 400, message);
    expectError(await roll("key_x", { graceSeconds: 604801 }), 400, /^graceSeconds must be a whole number of seconds from 0 to 604800/);
    assert.equal((await listKeys()).length, before);
  });

  it("answers outside a key's scopes with 403 naming the missing scope; :write holds :read", async () => {
    const reader = expectJson<ApiKeyJson>(await create({ name: "reader", scopes: ["payment_intents:read", "api_keys:write"] }), 201).secret!;
    assert.equal(await readStatus(reader), 200);
    const body = { amount: 100, customerEmail: "a@example.com", clientReference: "scoped-1" };
    expectError(await client.request("POST", "/v2/payment-intents", { json: body, ...as(reader) }), 403, /^this API key lacks the scope payment_intents:write$/);
    expectError(await client.request("GET", "/v2/webhook-endpoints", as(reader)), 403, /^this API key lacks the scope webhooks:read$/);
    expectError(await client.request("GET", "/v2/events", as(reader)), 403, /^this API key lacks the scope events:read$/);
    // api_keys:write holds api_keys:read.
    assert.ok((await listKeys(reader)).length > 0);
    // No escalation: a scope it lacks, or every scope, is refused.
    expectError(await create({ name: "wider", scopes: ["payment_intents:write"] }, reader), 403, /^this API key cannot grant the scope payment_intents:write: it does not hold it$/);
    expectError(await create({ name: "all" }, reader), 403, /^this API key cannot make a key with every scope/);
    const narrower = expectJson<ApiKeyJson>(await create({ name: "narrower", scopes: ["payment_intents:read"] }, reader), 201);
    expectError(await create({ name: "x" }, narrower.secret!), 403, /^this API key lacks the scope api_keys:write$/);
    // Rolling a key with more scopes than the caller would hand them over: refused too.
    const full = expectJson<ApiKeyJson>(await create({ name: "full" }), 201);
    expectError(await roll(full.id, {}, reader), 403, /^this API key cannot make a key with every scope/);
  });

  it("refuses a key from outside its allowedCidrs with 403 (the client here is 127.0.0.1)", async () => {
    const elsewhere = expectJson<ApiKeyJson>(await create({ name: "office", allowedCidrs: ["203.0.113.0/24", "2001:db8::/32"] }), 201).secret!;
    expectError(await client.request("GET", "/v2/payment-intents", as(elsewhere)), 403, /^this API key is not accepted from this client's address/);
    const here = expectJson<ApiKeyJson>(await create({ name: "loopback", allowedCidrs: ["127.0.0.0/8"], scopes: ["api_keys:write", "payment_intents:read"] }), 201).secret!;
    assert.equal(await readStatus(here), 200);
    // No escalation by networks: inside 127.0.0.0/8 it makes keys held inside it, never one for anywhere or wider.
    for (const allowedCidrs of [[], ["0.0.0.0/0"], ["127.0.0.0/7"], ["127.0.0.0/8", "10.0.0.0/8"]]) {
      expectError(
        await create({ name: "wider", scopes: ["api_keys:read"], allowedCidrs }, here),
        403,
        /^this API key is held to 127\.0\.0\.0\/8: it can only make keys held to networks inside those/,
      );
    }
    const inside = expectJson<ApiKeyJson>(await create({ name: "narrower", scopes: ["api_keys:read"], allowedCidrs: ["127.0.0.1/32"] }, here), 201);
    assert.deepEqual(inside.allowedCidrs, ["127.0.0.1/32"]);
    // Nor roll a key for anywhere into a new secret it would hold.
    const anywhere = expectJson<ApiKeyJson>(await create({ name: "anywhere", scopes: ["api_keys:read"] }), 201);
    expectError(await roll(anywhere.id, {}, here), 403, /it can only make keys held to networks inside those/);
  });

  it("rolls a key: 201 with a new secret and the same settings; the old one works until its grace ends", async () => {
    const old = expectJson<ApiKeyJson>(await create({ name: "rolled", scopes: ["payment_intents:read"], allowedCidrs: ["127.0.0.0/8"] }), 201);
    const rolled = expectJson<ApiKeyJson>(await roll(old.id, { graceSeconds: 60 }), 201);
    assert.notEqual(rolled.id, old.id);
    assert.notEqual(rolled.secret, old.secret);
    assert.deepEqual(
      { name: rolled.name, mode: rolled.mode, scopes: rolled.scopes, allowedCidrs: rolled.allowedCidrs, expiresAt: rolled.expiresAt },
      { name: "rolled", mode: "test", scopes: ["payment_intents:read"], allowedCidrs: ["127.0.0.0/8"], expiresAt: null },
    );
    const listedOld = (await listKeys()).find((k) => k.id === old.id)!;
    assert.equal(listedOld.expiresAt, "2026-12-05T16:01:00.000Z");
    assert.deepEqual([await readStatus(old.secret!), await readStatus(rolled.secret!)], [200, 200]);
    clock.advance(59_999);
    assert.equal(await readStatus(old.secret!), 200);
    clock.advance(1);
    expectError(await client.request("GET", "/v2/payment-intents", as(old.secret!)), 401, /^API key is not valid$/);
    assert.equal(await readStatus(rolled.secret!), 200);
    // An expired key cannot be rolled again.
    expectError(await roll(old.id, {}), 409, /has expired: it cannot be rolled/);
  });

  it("rolls with no grace (0 or omitted): the old key stops at once", async () => {
    for (const body of [{ graceSeconds: 0 }, {}]) {
      const old = expectJson<ApiKeyJson>(await create({ name: "leaked" }), 201);
      const rolled = expectJson<ApiKeyJson>(await roll(old.id, body), 201);
      assert.equal(await readStatus(old.secret!), 401);
      assert.equal(await readStatus(rolled.secret!), 200);
    }
  });

  it("revokes a key: refused at once, no longer listed, a second revoke is 404", async () => {
    const made = expectJson<ApiKeyJson>(await create({ name: "to revoke" }), 201);
    assert.equal(await readStatus(made.secret!), 200);
    assert.deepEqual(expectJson(await revoke(made.id), 200), { status: 200, title: "OK", message: `API key ${made.id} revoked` });
    assert.equal(await readStatus(made.secret!), 401);
    assert.equal((await listKeys()).some((k) => k.id === made.id), false);
    expectError(await revoke(made.id), 404, new RegExp(`^API key ${made.id} not found$`));
    expectError(await roll(made.id, {}), 404, /not found/);
    // Another merchant's key is a plain 404.
    const other = expectJson<ApiKeyJson>(await create({ name: "B's" }, server.keys["merchantB"]), 201);
    expectError(await revoke(other.id), 404, new RegExp(`^API key ${other.id} not found$`));
    assert.equal(await readStatus(other.secret!), 200);
  });

  it("refuses an expired key like a revoked one (401), at its expiresAt", async () => {
    const made = expectJson<ApiKeyJson>(await create({ name: "temporary", expiresAt: new Date(clock.now().getTime() + 3_600_000).toISOString() }), 201);
    assert.equal(await readStatus(made.secret!), 200);
    clock.advance(3_600_000);
    expectError(await client.request("GET", "/v2/payment-intents", as(made.secret!)), 401, /^API key is not valid$/);
    // A key that expires cannot make (or roll into) a key that outlives it.
    const brief = expectJson<ApiKeyJson>(
      await create({ name: "brief", scopes: ["api_keys:write"], expiresAt: new Date(clock.now().getTime() + 60_000).toISOString() }),
      201,
    );
    const forever = expectJson<ApiKeyJson>(await create({ name: "forever", scopes: ["api_keys:read"] }), 201);
    expectError(await create({ name: "longer", scopes: ["api_keys:read"] }, brief.secret!), 403, /^this API key expires at .*: it cannot make a key that outlives it/);
    expectError(await roll(forever.id, {}, brief.secret!), 403, /it cannot make a key that outlives it/);
    expectJson(await create({ name: "shorter", scopes: ["api_keys:read"], expiresAt: new Date(clock.now().getTime() + 30_000).toISOString() }, brief.secret!), 201);
    // Still listed, its expiresAt in the past, so the merchant sees why.
    assert.equal((await listKeys()).find((k) => k.id === made.id)?.expiresAt, made.expiresAt);
  });

  it("writes lastUsedAt at most once a minute per key", async () => {
    const made = expectJson<ApiKeyJson>(await create({ name: "busy" }), 201);
    const lastUsed = async () => (await listKeys()).find((k) => k.id === made.id)?.lastUsedAt;
    /** The write is in the background (the request never waits for it): the value it should reach, within 2 s. */
    const settlesAt = async (expected: string) => {
      for (let i = 0; i < 40 && (await lastUsed()) !== expected; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await lastUsed(), expected);
    };
    assert.equal(await lastUsed(), null);
    const first = clock.iso();
    await readStatus(made.secret!);
    await settlesAt(first);
    clock.advance(59_000);
    await readStatus(made.secret!);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(await lastUsed(), first, "a use within the minute writes nothing");
    clock.advance(1_000);
    await readStatus(made.secret!);
    await settlesAt(clock.iso());
  });

  it("records api_key.created, .rolled and .revoked events (never the secret), delivered to the key's mode's endpoints", async () => {
    const endpoint = expectJson<{ id: string }>(
      await client.request("POST", "/v2/webhook-endpoints", { json: { url: "https://shop.example.com/key-hooks", eventTypes: ["api_key.created", "api_key.rolled", "api_key.revoked"] } }),
      201,
    );
    const made = expectJson<ApiKeyJson>(await create({ name: "audited", scopes: ["events:read"] }), 201);
    const rolled = expectJson<ApiKeyJson>(await roll(made.id, { graceSeconds: 120 }), 201);
    expectJson(await revoke(rolled.id), 200);
    const events = expectJson<{ events: { type: string; data: unknown; apiKey: ApiKeyJson | null; livemode: boolean; id: string }[] }>(
      await client.request("GET", "/v2/events?pageSize=100"),
      200,
    ).events.filter((e) => e.apiKey && [made.id, rolled.id].includes(e.apiKey.id));
    const { secret: _made, ...madeListed } = made;
    assert.deepEqual(
      events.map((e) => [e.type, e.apiKey!.id, e.data, e.livemode]),
      [
        ["api_key.revoked", rolled.id, null, false],
        ["api_key.rolled", made.id, null, false],
        ["api_key.created", made.id, null, false],
      ],
    );
    assert.deepEqual(events[2]!.apiKey, madeListed);
    assert.equal(events[1]!.apiKey!.expiresAt, new Date(clock.now().getTime() + 120_000).toISOString());
    const text = JSON.stringify(events);
    assert.ok(!text.includes(made.secret!) && !text.includes(rolled.secret!), "no event carries a secret");
    // The filter by type, and the deliveries to the endpoint that takes them.
    const created = expectJson<{ events: { apiKey: ApiKeyJson | null }[] }>(await client.request("GET", "/v2/events?type=api_key.created&pageSize=100"), 200).events;
    assert.ok(created.some((e) => e.apiKey?.id === made.id));
    const deliveries = expectJson<{ deliveries: { eventType: string }[] }>(await client.request("GET", `/v2/webhook-endpoints/${endpoint.id}/deliveries?pageSize=100`), 200).deliveries;
    assert.deepEqual(deliveries.map((d) => d.eventType).sort(), ["api_key.created", "api_key.revoked", "api_key.rolled"]);
    // A live key's events are live mode's only.
    const liveMade = expectJson<ApiKeyJson>(await create({ name: "live audited" }, server.liveKeys["merchantA"]), 201);
    const testEvents = expectJson<{ events: { apiKey: ApiKeyJson | null }[] }>(await client.request("GET", "/v2/events?pageSize=100"), 200).events;
    assert.equal(testEvents.some((e) => e.apiKey?.id === liveMade.id), false);
    const liveEvents = expectJson<{ events: { apiKey: ApiKeyJson | null; livemode: boolean }[] }>(await client.request("GET", "/v2/events?pageSize=100", as(server.liveKeys["merchantA"]!)), 200).events;
    assert.deepEqual(liveEvents.filter((e) => e.apiKey?.id === liveMade.id).map((e) => e.livemode), [true]);
    expectJson(await client.request("DELETE", `/v2/webhook-endpoints/${endpoint.id}`), 200);
  });

  it("keeps modes apart: a test key manages only test keys, a live key both", async () => {
    const live = server.liveKeys["merchantA"]!;
    expectError(await create({ name: "x", mode: "live" }), 403, /^a test mode key cannot make live mode keys: use a live key$/);
    const liveMade = expectJson<ApiKeyJson>(await create({ name: "live one" }, live), 201);
    assert.equal(liveMade.mode, "live");
    assert.match(liveMade.secret!, secretPattern("live"));
    const testByLive = expectJson<ApiKeyJson>(await create({ name: "CI", mode: "test" }, live), 201);
    assert.match(testByLive.secret!, secretPattern("test"));
    const testList = await listKeys();
    assert.ok(testList.every((k) => k.mode === "test"), "a test key never lists live keys");
    assert.ok(testList.some((k) => k.id === testByLive.id));
    const liveList = await listKeys(live);
    assert.ok(liveList.some((k) => k.id === liveMade.id) && liveList.some((k) => k.id === testByLive.id));
    expectError(await revoke(liveMade.id), 404, /exists in live mode, but a test mode key was used/);
    expectError(await roll(liveMade.id, {}), 404, /exists in live mode, but a test mode key was used/);
    assert.equal(await readStatus(liveMade.secret!), 200);
    // A live key made through the API reads only live objects.
    const liveIntent = expectJson<{ id: string }>(
      await client.request("POST", "/v2/payment-intents", { json: { amount: 100, customerEmail: "a@example.com", clientReference: "live-key-api" }, ...as(live) }),
      201,
    );
    expectError(await client.getIntent(liveIntent.id), 404, /exists in live mode/);
    assert.equal((await client.request("GET", `/v2/payment-intents/${liveIntent.id}`, as(liveMade.secret!))).status, 200);
  });
});

describe("REST API keys behind a PROXY-protocol balancer", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ settings: { TRUSTED_PROXIES: "127.0.0.1" } });
  });
  after(() => server.close());

  /** One request as the balancer forwards it for client: the PROXY v1 header, then HTTP/1.1. */
  function send(client: string, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const payload = body === undefined ? "" : JSON.stringify(body);
    const head =
      `${method} /v1${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
      (body === undefined ? "" : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n`);
    return new Promise((resolve, reject) => {
      const socket = net.connect(server.port, "127.0.0.1");
      const chunks: Buffer[] = [];
      socket.on("data", (chunk) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("close", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const [header = "", rest = ""] = text.split("\r\n\r\n");
        resolve({ status: Number(header.split(" ")[1]), json: rest === "" ? undefined : JSON.parse(rest) });
      });
      socket.write(`PROXY TCP4 ${client} 127.0.0.1 40000 8080\r\n${head}\r\n${payload}`);
    });
  }

  it("judges allowedCidrs on the address the PROXY header names, not the balancer's", async () => {
    const made = await send("203.0.113.9", "POST", "/v2/api-keys", server.keys["merchantA"]!, { name: "office", allowedCidrs: ["203.0.113.0/24"] });
    assert.equal(made.status, 201);
    const secret = (made.json as ApiKeyJson).secret!;
    assert.equal((await send("203.0.113.77", "GET", "/v2/payment-intents", secret)).status, 200);
    const refused = await send("198.51.100.7", "GET", "/v2/payment-intents", secret);
    assert.deepEqual(refused, {
      status: 403,
      json: { status: 403, title: "Forbidden", message: "this API key is not accepted from this client's address (see its allowedCidrs)" },
    });
    // The balancer's own address is not the client's.
    assert.equal((await send("127.0.0.1", "GET", "/v2/payment-intents", secret)).status, 403);
  });
});
