import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { createSecureContext } from "node:tls";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { notPublicMessage } from "../../src/webhooks/endpoint-url.js";
import { checkEndpointHost } from "../../src/webhooks/endpoint-url.js";
import type { HostResolver } from "../../src/webhooks/host-resolver.js";
import { createWebhookSender, defaultWebhookUserAgent, type SendResult } from "../../src/webhooks/webhook-sender.js";
import { startReceiver, waitUntil, type Receiver } from "./support/receiver.js";

const body = JSON.stringify({ id: "evt_1", type: "payment_intent.created" });
const headers = { "webhook-id": "evt_1", "webhook-timestamp": "1700000000", "webhook-signature": "v1,abc" };
const receivers: Receiver[] = [];
after(() => Promise.all(receivers.map((r) => r.close())));

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

/** A resolver that answers from a list, one answer per call, repeating the last; counts its calls. */
function scriptedResolver(...answers: string[][]): HostResolver & { calls: number } {
  const counter = { calls: 0 };
  const resolve: HostResolver = async () => {
    const answer = answers[Math.min(counter.calls, answers.length - 1)]!;
    counter.calls += 1;
    return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.defineProperty(resolve, "calls", { get: () => counter.calls }) as HostResolver & { calls: number };
}

describe("createWebhookSender", () => {
  const sender = createWebhookSender({ timeoutMs: 2000, allowPrivate: true });

  it("POSTs the body as JSON with the webhook headers and a User-Agent", async () => {
    const r = await receiver();
    const result = await sender.send({ url: `${r.url}?tenant=a`, headers, body });
    assert.equal(result.outcome, "success");
    assert.equal(result.statusCode, 200);
    assert.equal(result.error, null);
    assert.ok(result.durationMs >= 0 && result.durationMs < 2000);
    const got = r.received[0]!;
    assert.equal(got.method, "POST");
    assert.equal(got.path, "/hook?tenant=a");
    assert.equal(got.body, body);
    assert.equal(got.headers["content-type"], "application/json");
    assert.equal(got.headers["content-length"], String(Buffer.byteLength(body)));
    assert.equal(got.headers["user-agent"], defaultWebhookUserAgent);
    assert.equal(got.headers["webhook-id"], "evt_1");
    assert.equal(got.headers["webhook-timestamp"], "1700000000");
    assert.equal(got.headers["webhook-signature"], "v1,abc");
    assert.equal(got.headers["host"], `127.0.0.1:${r.port}`);
  });

  it("classifies answers: 2xx success, 410 gone, others failures, 3xx not followed, Retry-After only on 429 and 503", async () => {
    const retryDate = new Date(Date.now() + 90_000).toUTCString();
    const table: [number, Record<string, string>, Partial<SendResult>][] = [
      [200, {}, { outcome: "success", statusCode: 200, retryAfterMs: null, error: null }],
      [202, {}, { outcome: "success", statusCode: 202 }],
      [204, {}, { outcome: "success", statusCode: 204 }],
      [299, {}, { outcome: "success", statusCode: 299 }],
      [301, { location: "http://127.0.0.1:1/elsewhere" }, { outcome: "http-error", statusCode: 301, error: "redirects are not followed" }],
      [307, { location: "/again" }, { outcome: "http-error", statusCode: 307, error: "redirects are not followed" }],
      [400, {}, { outcome: "http-error", statusCode: 400, error: null }],
      [404, {}, { outcome: "http-error", statusCode: 404 }],
      [410, {}, { outcome: "gone", statusCode: 410 }],
      [429, { "retry-after": "7" }, { outcome: "http-error", statusCode: 429, retryAfterMs: 7000 }],
      [429, {}, { outcome: "http-error", statusCode: 429, retryAfterMs: null }],
      [500, { "retry-after": "7" }, { outcome: "http-error", statusCode: 500, retryAfterMs: null }],
      [503, { "retry-after": "soon" }, { outcome: "http-error", statusCode: 503, retryAfterMs: null }],
    ];
    for (const [status, answerHeaders, expected] of table) {
      const r = await receiver(() => ({ status, headers: answerHeaders }));
      const result = await sender.send({ url: r.url, headers, body });
      for (const [key, value] of Object.entries(expected)) assert.deepEqual(result[key as keyof SendResult], value, `${status} ${key}`);
      assert.equal(r.received.length, 1, `${status}: exactly one request, no redirect followed`);
    }
    const r = await receiver(() => ({ status: 503, headers: { "retry-after": retryDate } }));
    const result = await sender.send({ url: r.url, headers, body });
    assert.equal(result.outcome, "http-error");
    assert.ok(result.retryAfterMs! > 80_000 && result.retryAfterMs! <= 90_000, `HTTP-date Retry-After read as ${result.retryAfterMs} ms`);
  });

  it("times out an endpoint that never answers, within WEBHOOK_TIMEOUT_MS", async () => {
    const r = await receiver(() => "hang");
    const quick = createWebhookSender({ timeoutMs: 300, allowPrivate: true });
    const started = performance.now();
    const result = await quick.send({ url: r.url, headers, body });
    const took = performance.now() - started;
    assert.equal(result.outcome, "timeout");
    assert.equal(result.statusCode, null);
    assert.equal(result.error, "no answer within 300 ms");
    // Not early; and never later than the timeout's own cut, as the receiver never answers.
    assert.ok(took >= 290, `took ${took} ms`);
    await waitUntil(() => r.open() === 0, "the connection is closed");
  });

  it("reports a refused connection", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const result = await sender.send({ url: `http://127.0.0.1:${port}/hook`, headers, body });
    assert.equal(result.outcome, "connection-error");
    assert.equal(result.statusCode, null);
    assert.match(result.error!, /ECONNREFUSED/);
  });

  it("reads at most a few KB of an answer's body, then drops the connection", async () => {
    let closed = false;
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(16 * 1024);
      const timer = setInterval(() => res.write(chunk), 5);
      res.on("close", () => {
        clearInterval(timer);
        closed = true;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const result = await createWebhookSender({ timeoutMs: 10_000, allowPrivate: true }).send({ url: `http://127.0.0.1:${port}/`, headers, body });
      assert.equal(result.outcome, "success");
      await waitUntil(() => closed, "the endless body is cut", 2000);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("reports a failed DNS lookup as a refused host does to the merchant, the DNS error in the detail", async () => {
    const resolve: HostResolver = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.test"), { code: "ENOTFOUND" });
    };
    const result = await createWebhookSender({ timeoutMs: 1000, allowPrivate: true, resolve }).send({ url: "http://nowhere.test/x", headers, body });
    assert.deepEqual(
      { outcome: result.outcome, error: result.error, detail: result.detail },
      { outcome: "connection-error", error: notPublicMessage(), detail: "DNS lookup failed (ENOTFOUND)" },
    );
  });

  it("stops at once, as aborted, when the engine cuts the attempt", async () => {
    const r = await receiver(() => "hang");
    const controller = new AbortController();
    const sending = sender.send({ url: r.url, headers, body, signal: controller.signal });
    await r.nth(1);
    controller.abort();
    const result = await sending;
    assert.equal(result.outcome, "aborted");
  });
});

describe("createWebhookSender's address rule (SSRF)", () => {
  it("refuses a host that resolves to a loopback address when private URLs are not allowed, without connecting", async () => {
    const r = await receiver();
    const strict = createWebhookSender({ timeoutMs: 2000, allowPrivate: false });
    for (const url of [`http://localhost:${r.port}/hook`, `http://127.0.0.1:${r.port}/hook`, `http://[::ffff:127.0.0.1]:${r.port}/hook`]) {
      const result = await strict.send({ url, headers, body });
      assert.equal(result.outcome, "refused-address", url);
      assert.equal(result.error, notPublicMessage(), url);
      assert.match(result.detail!, /^the host resolves to (127\.0\.0\.1|::1|::ffff:7f00:1), a loopback address$/, url);
      assert.equal(result.statusCode, null);
    }
    assert.equal(r.received.length, 0);
  });

  it("refuses at delivery a host that resolved to a public address at registration (DNS rebinding)", async () => {
    const r = await receiver();
    const resolve = scriptedResolver(["93.184.215.14"], ["127.0.0.1"]);
    const url = new URL(`http://rebind.test:${r.port}/hook`);
    await checkEndpointHost("url", url, { allowPrivate: false, resolve });
    const result = await createWebhookSender({ timeoutMs: 2000, allowPrivate: false, resolve }).send({ url: url.href, headers, body });
    assert.equal(result.outcome, "refused-address");
    assert.equal(result.error, notPublicMessage());
    assert.equal(result.detail, "the host resolves to 127.0.0.1, a loopback address");
    assert.equal(r.received.length, 0);
  });

  it("refuses a host when any one of its addresses is not public", async () => {
    const resolve = scriptedResolver(["93.184.215.14", "10.0.0.5"]);
    const result = await createWebhookSender({ timeoutMs: 2000, allowPrivate: false, resolve }).send({ url: "https://mixed.test/hook", headers, body });
    assert.equal(result.outcome, "refused-address");
    assert.equal(result.error, notPublicMessage());
    assert.equal(result.detail, "the host resolves to 10.0.0.5, a private address");
  });

  it("resolves once and connects to the checked address, keeping the URL's host in Host", async () => {
    const r = await receiver();
    // A second lookup would answer an address where nothing listens.
    const resolve = scriptedResolver(["127.0.0.1"], ["127.0.0.2"]);
    const sender = createWebhookSender({ timeoutMs: 2000, allowPrivate: true, resolve });
    const result = await sender.send({ url: `http://receiver.test:${r.port}/hook`, headers, body });
    assert.equal(result.outcome, "success");
    assert.equal(resolve.calls, 1);
    assert.equal(r.received[0]!.headers["host"], `receiver.test:${r.port}`);
  });

  it("keeps a connection alive per endpoint, and resolves and checks again at every attempt", async () => {
    const connections: string[] = [];
    const server = createServer((_req, res) => res.writeHead(204).end());
    server.on("connection", (socket) => connections.push(socket.localAddress!));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const resolve = scriptedResolver(["127.0.0.1"]);
    const sender = createWebhookSender({ timeoutMs: 2000, allowPrivate: true, resolve });
    try {
      for (let i = 0; i < 5; i++) {
        assert.equal((await sender.send({ url: `http://pooled.test:${port}/hook`, headers, body })).outcome, "success");
        // The answer is classified at its headers; its (empty) body ends a moment later, freeing the connection.
        await new Promise((done) => setTimeout(done, 20));
      }
      assert.equal(connections.length, 1, "five deliveries over one warm connection");
      assert.equal(resolve.calls, 5, "a lookup and an address check per attempt");
    } finally {
      await sender.close();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  it("never reuses a warm connection to an address the host no longer resolves to (DNS pinning with pools)", async () => {
    const first = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => first.listen(0, "127.0.0.1", resolve));
    const port = (first.address() as AddressInfo).port;
    const second = createServer((_req, res) => res.writeHead(202).end());
    await new Promise<void>((resolve) => second.listen(port, "127.0.0.2", resolve));
    const resolve = scriptedResolver(["127.0.0.1"], ["127.0.0.2"]);
    const sender = createWebhookSender({ timeoutMs: 2000, allowPrivate: true, resolve });
    try {
      const url = `http://moving.test:${port}/hook`;
      assert.equal((await sender.send({ url, headers, body })).statusCode, 204);
      assert.equal((await sender.send({ url, headers, body })).statusCode, 202, "the second attempt goes to the newly checked address");
    } finally {
      await sender.close();
      for (const server of [first, second]) {
        server.closeAllConnections();
        await new Promise((done) => server.close(done));
      }
    }
  });

  it("sends the URL's host as TLS SNI when connecting to the checked address, and verifies the certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webhook-tls-"));
    try {
      execFileSync("openssl", [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
        "-subj", "/CN=receiver.test", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
      ], { stdio: "ignore" });
      const credentials = { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) };
      const names: string[] = [];
      const server = createTlsServer(
        {
          ...credentials,
          // Called with the name the client asked for in its ClientHello.
          SNICallback: (name, done) => {
            names.push(name);
            done(null, createSecureContext(credentials));
          },
        },
        (_req, res) => res.end(),
      );
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as AddressInfo).port;
      const resolve = scriptedResolver(["127.0.0.1"]);
      const result = await createWebhookSender({ timeoutMs: 2000, allowPrivate: true, resolve }).send({ url: `https://receiver.test:${port}/hook`, headers, body });
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      assert.deepEqual(names, ["receiver.test"]);
      assert.equal(result.outcome, "connection-error", "a self-signed certificate is refused");
      assert.match(result.error!, /self-signed certificate|DEPTH_ZERO_SELF_SIGNED_CERT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

