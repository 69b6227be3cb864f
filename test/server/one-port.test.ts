import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { Duplex } from "node:stream";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { startTestServer, type TestServer } from "../support/test-server.js";

interface Reply {
  status: number;
  contentType: string | undefined;
  body: unknown;
}

/** http1Request sends one request over HTTP/1.1 with node:http. */
function http1Request(
  url: string,
  options: { method?: string; headers?: http.OutgoingHttpHeaders; agent?: http.Agent; body?: string } = {},
): Promise<Reply & { socket: net.Socket; httpVersion: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: options.headers, agent: options.agent }, (res) => {
      // Read now: a keep-alive agent takes the socket back when the response ends.
      const socket = res.socket;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode!,
          contentType: res.headers["content-type"],
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
          socket,
          httpVersion: res.httpVersion,
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** http2Request sends one request on an open HTTP/2 session. */
function http2Request(
  session: http2.ClientHttp2Session,
  path: string,
  headers: http2.OutgoingHttpHeaders = {},
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "GET", ":path": path, ...headers });
    let responseHeaders: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (received) => {
      responseHeaders = received;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () =>
      resolve({
        status: Number(responseHeaders[":status"]),
        contentType: responseHeaders["content-type"] as string | undefined,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
      }),
    );
    stream.on("error", reject);
    stream.end(body);
  });
}

/** connectH2c opens a prior-knowledge cleartext HTTP/2 session and waits until it is up. */
async function connectH2c(url: string, options: http2.ClientSessionOptions = {}): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(url, options);
  await new Promise<void>((resolve, reject) => {
    session.once("connect", () => resolve());
    session.once("error", reject);
  });
  return session;
}

/**
 * tricklingConnection is a TCP connection that sends its first `count` bytes
 * one per write, a few milliseconds apart, so the server sees the start of the
 * stream in many small reads; later bytes pass straight through.
 */
function tricklingConnection(port: number, count: number): Duplex {
  const socket = net.connect({ host: "127.0.0.1", port, noDelay: true });
  let left = count;
  const duplex = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      void (async () => {
        let rest = chunk;
        while (left > 0 && rest.length > 0) {
          socket.write(rest.subarray(0, 1));
          rest = rest.subarray(1);
          left--;
          await delay(3);
        }
        if (rest.length > 0) socket.write(rest, () => callback());
        else callback();
      })().catch(callback);
    },
    read() {
      socket.resume();
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(error, callback) {
      socket.destroy(error ?? undefined);
      callback(error);
    },
  });
  socket.on("data", (data: Buffer) => {
    if (!duplex.push(data)) socket.pause();
  });
  socket.on("end", () => duplex.push(null));
  socket.on("error", (error) => duplex.destroy(error));
  return duplex;
}

/** sendByteByByte writes a raw request one byte at a time and reads until the server closes. */
async function sendByteByByte(port: number, request: string): Promise<string> {
  const socket = net.connect({ host: "127.0.0.1", port, noDelay: true });
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    socket.on("end", () => resolve());
    socket.on("error", reject);
  });
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  for (const byte of Buffer.from(request, "utf8")) {
    socket.write(Buffer.of(byte));
    await delay(1);
  }
  await ended;
  socket.destroy();
  return Buffer.concat(chunks).toString("utf8");
}

describe("one port", () => {
  let server: TestServer;
  let h2: http2.ClientHttp2Session;

  before(async () => {
    server = await startTestServer();
    for (const n of [1, 2]) {
      const res = await fetch(`${server.restUrl}/v2/payment-intents`, {
        method: "POST",
        headers: { authorization: server.bearer(), "content-type": "application/json" },
        body: JSON.stringify({ amount: 1000 * n, customerEmail: "ada@example.com", clientReference: `one-port-${n}` }),
      });
      assert.equal(res.status, 201);
    }
    h2 = await connectH2c(server.url);
  });
  after(async () => {
    h2.close();
    await server.close();
  });

  const cases: { name: string; method: string; path: string; status: number }[] = [
    { name: "a list", method: "GET", path: "/v1/v2/payment-intents", status: 200 },
    { name: "an unknown path", method: "GET", path: "/v1/v2/nowhere", status: 404 },
    { name: "a wrong method", method: "PUT", path: "/v1/v2/payment-intents", status: 405 },
  ];
  for (const { name, method, path, status } of cases) {
    it(`answers ${name} identically over HTTP/1.1 and h2c`, async () => {
      const headers = { authorization: server.bearer() };
      const one = await http1Request(`${server.url}${path}`, { method, headers });
      const two = await http2Request(h2, path, { ":method": method, ...headers });
      assert.equal(one.httpVersion, "1.1");
      assert.equal(one.status, status);
      assert.deepEqual(
        { status: two.status, contentType: two.contentType, body: two.body },
        { status: one.status, contentType: one.contentType, body: one.body },
      );
      assert.match(one.contentType ?? "", /^application\/json/);
    });
  }

  it("lists both intents over either protocol", async () => {
    const two = await http2Request(h2, "/v1/v2/payment-intents", { authorization: server.bearer() });
    const refs = (two.body as { paymentIntents: { clientReference: string }[] }).paymentIntents.map((p) => p.clientReference);
    assert.deepEqual(refs.sort(), ["one-port-1", "one-port-2"]);
  });

  it("serves an HTTP/1.1 request that arrives one byte at a time, even one starting like the preface (P…)", async () => {
    const body = JSON.stringify({ amount: 4200, customerEmail: "ada@example.com", clientReference: "one-port-bytes" });
    const raw = await sendByteByByte(
      server.port,
      [
        "POST /v1/v2/payment-intents HTTP/1.1",
        `Host: 127.0.0.1:${server.port}`,
        `Authorization: ${server.bearer()}`,
        "Content-Type: application/json",
        `Content-Length: ${Buffer.byteLength(body)}`,
        "Connection: close",
        "",
        body,
      ].join("\r\n"),
    );
    const [head, payload] = raw.split("\r\n\r\n");
    assert.match(head!, /^HTTP\/1\.1 201 Created\r\n/);
    const created = JSON.parse(payload!) as Record<string, unknown>;
    assert.equal(created["clientReference"], "one-port-bytes");
    assert.equal(created["amount"], "4200");
  });

  it("serves an h2c client whose connection preface arrives one byte at a time", async () => {
    const session = await connectH2c(server.url, {
      // The 24-byte preface plus the client's first SETTINGS frame.
      createConnection: () => tricklingConnection(server.port, 40),
    });
    try {
      const slow = await http2Request(session, "/v1/v2/payment-intents", { authorization: server.bearer() });
      const fast = await http2Request(h2, "/v1/v2/payment-intents", { authorization: server.bearer() });
      assert.equal(slow.status, 200);
      assert.deepEqual(slow.body, fast.body);
    } finally {
      session.close();
    }
  });
});

describe("ListeningServer.close", () => {
  it("resolves promptly with an idle keep-alive HTTP/1.1 connection and an idle h2 session open", async () => {
    const server = await startTestServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const session = await connectH2c(server.url);
    let closed = false;
    try {
      const headers = { authorization: server.bearer() };
      const one = await http1Request(`${server.restUrl}/v2/payment-intents`, { headers, agent });
      assert.equal(one.status, 200);
      const two = await http2Request(session, "/v1/v2/payment-intents", headers);
      assert.equal(two.status, 200);
      // Both connections are now idle and still open.
      assert.equal(one.socket.destroyed, false);
      assert.equal(session.closed, false);
      const http1Closed = new Promise<void>((resolve) => one.socket.once("close", () => resolve()));
      const sessionClosed = new Promise<void>((resolve) => session.once("close", () => resolve()));

      const started = performance.now();
      await server.close();
      closed = true;
      const took = performance.now() - started;
      assert.ok(took < 1000, `close() took ${Math.round(took)} ms`);

      const within = (promise: Promise<void>, what: string) =>
        Promise.race([promise, delay(1000).then(() => assert.fail(`${what} is still open`))]);
      await within(http1Closed, "the keep-alive HTTP/1.1 connection");
      await within(sessionClosed, "the h2 session");

      // The port is free: nothing answers any more.
      await assert.rejects(fetch(`${server.restUrl}/v2/payment-intents`, { headers }));
    } finally {
      agent.destroy();
      session.destroy();
      if (!closed) await server.close();
    }
  });
});
