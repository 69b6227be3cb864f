import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import { Duplex } from "node:stream";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { connectH2c, http1Request, http2Request } from "../support/keep-alive-requests.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
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
