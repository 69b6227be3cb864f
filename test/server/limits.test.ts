import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import type { HttpRoute } from "../../src/http/http-route.js";
import { expectConnectError } from "../rpc/support/rpc-helpers.js";
import { createManualClock } from "../support/manual-clock.js";
import { createRestClient, expectJson } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** openSocket connects and collects everything the server sends until it closes. */
async function openSocket(port: number) {
  const socket = net.connect({ host: "127.0.0.1", port, noDelay: true });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.on("error", () => {});
  const started = performance.now();
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(performance.now() - started)));
  return { socket, closed, received: () => Buffer.concat(chunks).toString("latin1") };
}

/** within fails when promise does not settle within ms. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, delay(ms).then(() => assert.fail(`${what} did not happen within ${ms} ms`))]);
}

describe("per-key rate limit", () => {
  let server: TestServer;
  const clock = createManualClock();

  before(async () => {
    server = await startTestServer({ clock, settings: { RATE_LIMIT_RPS: "2", RATE_LIMIT_BURST: "3" } });
  });
  after(() => server.close());

  it("answers REST 429 with Retry-After and the error body after the burst, per key, until tokens return", async () => {
    const rest = createRestClient(server);
    for (let i = 0; i < 3; i++) expectJson(await rest.listAccounts(), 200);
    const limited = await rest.listAccounts();
    const body = expectJson<Record<string, unknown>>(limited, 429);
    assert.deepEqual(body, {
      status: 429,
      title: "Too Many Requests",
      message: "rate limit exceeded: at most 2 requests per second per API key, bursts of 3; retry after 1 s",
    });
    assert.equal(limited.headers.get("retry-after"), "1");
    // Another key has its own bucket.
    expectJson(await rest.listAccounts("merchantB"), 200);
    // An unknown key is still 401, not 429: the limit applies to verified keys.
    assert.equal((await rest.request("GET", "/v2/settlement-accounts", { authorization: "Bearer sk_test_unknown_key_0000" })).status, 401);
    clock.advance(500);
    expectJson(await rest.listAccounts(), 200);
    assert.equal((await rest.listAccounts()).status, 429);
  });

  it("answers RPC ResourceExhausted with retry-after over Connect and gRPC", async () => {
    clock.advance(10_000);
    const headers = { authorization: server.bearer("merchantB") };
    for (const transport of [
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
      createGrpcTransport({ baseUrl: server.url }),
    ]) {
      clock.advance(10_000);
      const client = createClient(SettlementAccountService, transport);
      for (let i = 0; i < 3; i++) await client.listSettlementAccounts({}, { headers });
      const error = await expectConnectError(client.listSettlementAccounts({}, { headers }), Code.ResourceExhausted, /rate limit exceeded/);
      assert.equal(error.metadata.get("retry-after"), "1");
    }
  });
});

describe("failed-authentication throttle per client address", () => {
  let server: TestServer;
  const clock = createManualClock();

  before(async () => {
    server = await startTestServer({ clock, settings: { AUTH_FAILURES_PER_MINUTE: "1", AUTH_FAILURES_BURST: "3" } });
  });
  after(() => server.close());

  const list = (authorization: string) =>
    fetch(`${server.restUrl}/v2/settlement-accounts`, { headers: { authorization } }).then(async (res) => ({
      status: res.status,
      retryAfter: res.headers.get("retry-after"),
      body: (await res.json()) as { message: string },
    }));

  it("answers 401 until the address has spent its budget, then 429 with Retry-After for unknown keys", async () => {
    // The merchants have been calling all along: their keys are known good (on PostgreSQL, cached).
    assert.equal((await list(server.bearer("merchantA"))).status, 200);
    assert.equal((await list(server.bearer("merchantB"))).status, 200);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await list(`Bearer sk_test_unknown_${i}_0123456789`)).status);
    // Three failures are the budget; the fourth is refused by the limiter and blocks the address.
    assert.deepEqual(statuses, [401, 401, 401, 401, 429]);
    const blocked = await list("Bearer sk_test_another_unknown_key");
    assert.equal(blocked.status, 429);
    assert.match(blocked.body.message, /^too many failed authentications from this address; retry after \d+ s$/);
    assert.ok(Number(blocked.retryAfter) >= 1);
  });

  it("still lets a known key through from the blocked address, over REST and RPC, and no other", async () => {
    assert.equal((await list(server.bearer())).status, 200);
    const client = createClient(SettlementAccountService, createGrpcTransport({ baseUrl: server.url }));
    const listed = await client.listSettlementAccounts({}, { headers: { authorization: server.bearer("merchantB") } });
    assert.deepEqual(listed.settlementAccounts, []);
    await expectConnectError(
      client.listSettlementAccounts({}, { headers: { authorization: "Bearer sk_test_still_unknown_key" } }),
      Code.ResourceExhausted,
    );
  });

  it("lifts the block once the budget refills", async () => {
    clock.advance(10 * 60_000);
    assert.equal((await list("Bearer sk_test_unknown_after_a_while")).status, 401);
  });
});

describe("failed-authentication throttle and keys the verifier has not cached", () => {
  let server: TestServer;
  const clock = createManualClock();
  let lookups = 0;

  before(async () => {
    server = await startTestServer({
      clock,
      settings: { AUTH_FAILURES_PER_MINUTE: "1", AUTH_FAILURES_BURST: "2" },
      // As PostgreSQL's verifier once a key's cache entry lapsed: knows() says no, verify() asks the store.
      wrapVerifier: (verifier) => ({
        knows: () => false,
        verify: (key) => {
          lookups++;
          return verifier.verify(key);
        },
      }),
    });
  });
  after(() => server.close());

  const list = (authorization: string) =>
    fetch(`${server.restUrl}/v2/settlement-accounts`, { headers: { authorization } }).then((res) => res.status);

  it("never refuses a key the store knows because others failed from the same address", async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await list(`Bearer sk_test_made_up_${i}_0123456789`));
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    lookups = 0;
    assert.equal(await list(server.bearer("merchantA")), 200);
    assert.equal(await list(server.bearer("merchantB")), 200);
    assert.equal(lookups, 2);
    // Made-up keys from the blocked address stay 429, looked up or not.
    assert.equal(await list("Bearer sk_test_made_up_again_0123456789"), 429);
    assert.equal(await list("Basic abc"), 429);
  });
});

describe("timeouts against slow and silent clients", () => {
  let server: TestServer;
  const limits = { headersTimeoutMs: 300, requestTimeoutMs: 600, idleTimeoutMs: 400, maxConcurrentStreams: 7 };

  before(async () => {
    server = await startTestServer({ limits });
  });
  after(() => server.close());

  it("cuts off a client that trickles its headers, with 408", async () => {
    const client = await openSocket(server.port);
    client.socket.write("GET /v1/v2/payment-intents HTTP/1.1\r\nHost: x\r\n");
    const trickle = setInterval(() => client.socket.write("X-Slow: 1\r\n"), 50);
    try {
      const took = await within(client.closed, 2000, "closing the slow-headers connection");
      assert.ok(took >= 250, `closed after ${took} ms, before the headers timeout`);
      assert.match(client.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/);
    } finally {
      clearInterval(trickle);
    }
  });

  it("closes a connection that sends nothing at all", async () => {
    const client = await openSocket(server.port);
    const took = await within(client.closed, 2000, "closing the silent connection");
    assert.ok(took >= 250, `closed after ${took} ms`);
    assert.equal(client.received(), "");
  });

  it("closes a connection that stops after a partial HTTP/2 preface", async () => {
    const client = await openSocket(server.port);
    client.socket.write("PRI * HTTP/2.0\r\n");
    await within(client.closed, 2000, "closing the half-preface connection");
  });

  it("cuts off a client that trickles its body past the request timeout", async () => {
    const client = await openSocket(server.port);
    client.socket.write(
      `POST /v1/v2/settlement-accounts HTTP/1.1\r\nHost: x\r\nAuthorization: ${server.bearer()}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
    );
    const trickle = setInterval(() => client.socket.write(" "), 50);
    try {
      const took = await within(client.closed, 2500, "closing the slow-body connection");
      assert.ok(took >= 500, `closed after ${took} ms, before the request timeout`);
    } finally {
      clearInterval(trickle);
    }
  });

  it("still serves a prompt client", async () => {
    expectJson(await createRestClient(server).listAccounts(), 200);
  });

  it("advertises the HTTP/2 stream cap in SETTINGS and resets a stream whose body never comes", async () => {
    const session = http2.connect(server.url);
    try {
      const settings = await new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve));
      assert.equal(settings.maxConcurrentStreams, 7);
      const stream = session.request({
        ":method": "POST",
        ":path": "/v1/v2/settlement-accounts",
        authorization: server.bearer(),
        "content-type": "application/json",
      });
      stream.write("{");
      stream.on("error", () => {});
      stream.resume();
      const started = performance.now();
      await within(new Promise((resolve) => stream.once("close", resolve)), 2500, "resetting the slow stream");
      assert.ok(performance.now() - started >= 500);
      assert.equal(stream.rstCode, http2.constants.NGHTTP2_CANCEL);
    } finally {
      session.destroy();
    }
  });

  it("closes an idle HTTP/2 session with GOAWAY", async () => {
    const session = http2.connect(server.url);
    const goaway = new Promise<number>((resolve) => session.once("goaway", (code) => resolve(code)));
    session.on("error", () => {});
    assert.equal(await within(goaway, 2000, "GOAWAY on the idle session"), http2.constants.NGHTTP2_NO_ERROR);
    session.destroy();
  });
});

describe("HTTP/2 idle timeout with a slow request", () => {
  it("keeps a session whose only stream waits on a slow handler, then closes it once idle", async () => {
    const slow: HttpRoute = {
      matches: (path) => path === "/slow",
      async handle(_req, res) {
        await delay(700);
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("done");
      },
    };
    const server = await startTestServer({ limits: { idleTimeoutMs: 300 }, httpRoutes: [slow] });
    const session = http2.connect(server.url);
    try {
      let goawayAt = 0;
      const goaway = new Promise<void>((resolve) =>
        session.once("goaway", () => {
          goawayAt = performance.now();
          resolve();
        }),
      );
      const stream = session.request({ ":path": "/slow" });
      stream.setEncoding("utf8");
      let text = "";
      stream.on("data", (chunk: string) => (text += chunk));
      await new Promise((resolve) => stream.once("end", resolve));
      const endedAt = performance.now();
      assert.equal(text, "done");
      await within(goaway, 2000, "GOAWAY after the stream ended");
      assert.ok(goawayAt - endedAt >= 200, "the session closed before it was idle for idleTimeoutMs");
    } finally {
      session.destroy();
      await server.close();
    }
  });
});
