import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { clientAddressOf } from "../../src/http/client-address.js";
import type { NodeHandler } from "../../src/http/node-http.js";
import { listen, type ListeningServer, type ListenOptions } from "../../src/listener/listen.js";
import type { DroppedConnection } from "../../src/listener/listener-events.js";
import { proxyV2Signature } from "../../src/listener/proxy-header.js";
import { parseTrustedProxies } from "../../src/listener/trusted-proxies.js";
import { h2Preface, openRaw, parseAnswers, within } from "./support/hostile-clients.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** Answers every request with the client address the service sees. */
const echoAddress: NodeHandler = (req, res) => {
  res.writeHead(200, { "content-type": "text/plain" });
  res.end(clientAddressOf(req.socket) ?? "none");
};

/**
 * useEchoListener: a listener answering with the client address it sees,
 * trusting the balancers in trustedProxies (a CIDR list), started before the
 * describe's tests and closed after; `server` reads the one started.
 */
function useEchoListener(trustedProxies: string, limits?: ListenOptions["limits"]) {
  let listening: ListeningServer | undefined;
  const dropped: DroppedConnection[] = [];
  before(async () => {
    listening = await listen(echoAddress, {
      host: "127.0.0.1",
      port: 0,
      limits,
      trustedProxies: parseTrustedProxies(trustedProxies),
      onConnectionDropped: (event) => dropped.push(event),
    });
  });
  after(() => listening?.close({ graceMs: 100 }));
  return {
    dropped,
    server: {
      get port() {
        return listening!.port;
      },
    },
  };
}

function v2(command: number, family: number, block: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(block.length);
  return Buffer.concat([proxyV2Signature, Buffer.from([0x20 | command, family]), length, block]);
}
const v2Tcp4 = (a: number[], port = 40000) => {
  const block = Buffer.alloc(12);
  Buffer.from(a).copy(block, 0);
  Buffer.from([127, 0, 0, 1]).copy(block, 4);
  block.writeUInt16BE(port, 8);
  block.writeUInt16BE(8080, 10);
  return v2(1, 0x11, block);
};
const v2Tcp6 = (hex: string) => v2(1, 0x21, Buffer.concat([Buffer.from(hex, "hex"), Buffer.alloc(15), Buffer.from([1, 0x9c, 0x40, 0x1f, 0x90])]));
const get = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/** send writes bytes on a fresh connection and resolves with what came back once the server closed it. */
async function send(port: number, ...parts: (Buffer | string)[]): Promise<{ received: string; closedAfterMs: number }> {
  const client = await openRaw(port);
  for (const part of parts) client.socket.write(part);
  const closedAfterMs = await within(client.closed, 3000, "the server closing the connection");
  return { received: client.received().toString("latin1"), closedAfterMs };
}

describe("PROXY protocol from a trusted balancer (TRUSTED_PROXIES=127.0.0.0/8)", () => {
  const { dropped, server } = useEchoListener("127.0.0.0/8", { headersTimeoutMs: 400, requestTimeoutMs: 2000 });

  const bodyOf = (received: string) => parseAnswers(Buffer.from(received, "latin1"))[0]?.body;

  it("takes the client address from a v1 TCP4 header, sent alone or with the request in one write", async () => {
    assert.equal(bodyOf((await send(server.port, "PROXY TCP4 203.0.113.7 127.0.0.1 50000 8080\r\n", get)).received), "203.0.113.7");
    assert.equal(bodyOf((await send(server.port, `PROXY TCP4 198.51.100.9 127.0.0.1 50000 8080\r\n${get}`)).received), "198.51.100.9");
  });

  it("takes it from a v1 TCP6 header", async () => {
    assert.equal(bodyOf((await send(server.port, "PROXY TCP6 2001:db8::7 ::1 50000 8080\r\n", get)).received), "2001:db8::7");
  });

  it("takes it from v2 TCP4 and TCP6 headers, byte by byte too", async () => {
    assert.equal(bodyOf((await send(server.port, v2Tcp4([192, 0, 2, 44]), get)).received), "192.0.2.44");
    const header = v2Tcp6("20010db8000000000000000000000009");
    assert.equal(bodyOf((await send(server.port, ...[...header].map((byte) => Buffer.from([byte])), get)).received), "2001:db8:0:0:0:0:0:9");
  });

  it("keeps the peer's own address for v2 LOCAL (the balancer's health check) and v1 UNKNOWN", async () => {
    assert.equal(bodyOf((await send(server.port, v2(0, 0, Buffer.alloc(0)), get)).received), "127.0.0.1");
    assert.equal(bodyOf((await send(server.port, "PROXY UNKNOWN\r\n", get)).received), "127.0.0.1");
  });

  it("carries the address to HTTP/2 (h2c) requests", async () => {
    const session = http2.connect(`http://127.0.0.1:${server.port}`, {
      createConnection: () => {
        const socket = net.connect(server.port, "127.0.0.1");
        socket.write(v2Tcp4([203, 0, 113, 99]));
        return socket;
      },
    });
    try {
      const stream = session.request({ ":path": "/" });
      let body = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (body += chunk));
      await new Promise((resolve) => stream.on("end", resolve));
      assert.equal(body, "203.0.113.99");
    } finally {
      session.close();
    }
  });

  it("closes, unanswered, a trusted peer's connection without a header, with a malformed one, or with a second one", async () => {
    dropped.length = 0;
    for (const bytes of [get, "PROXY TCP4 203.0.113.7 127.0.0.1 50000\r\n", "PROXY TCP4 1.2.3.4.5 127.0.0.1 1 2\r\n", v2(3, 0x11, Buffer.alloc(12))]) {
      assert.equal((await send(server.port, bytes)).received, "", JSON.stringify(bytes.toString()));
    }
    assert.deepEqual(dropped.map((event) => event.reason), ["proxy-header-invalid", "proxy-header-invalid", "proxy-header-invalid", "proxy-header-invalid"]);
    dropped.length = 0;
    const twice = await send(server.port, "PROXY TCP4 203.0.113.7 127.0.0.1 1 2\r\n", "PROXY TCP4 203.0.113.8 127.0.0.1 1 2\r\n", get);
    assert.equal(twice.received, "");
    assert.deepEqual(dropped, [{ reason: "proxy-header-untrusted" }]);
  });

  it("refuses a v2 header announcing more than it accepts at once, and an endless v1 line at 107 bytes", async () => {
    assert.equal((await send(server.port, Buffer.concat([proxyV2Signature, Buffer.from([0x21, 0x11, 0xff, 0xff])]))).received, "");
    dropped.length = 0;
    const endless = await send(server.port, `PROXY UNKNOWN ${"x".repeat(200)}`);
    assert.equal(endless.received, "");
    // Refused for its length, not left to the headers timeout.
    assert.deepEqual(dropped, [{ reason: "proxy-header-invalid" }]);
  });

  it("closes a header that does not arrive within the headers timeout", async () => {
    dropped.length = 0;
    const slow = await send(server.port, "PROXY TCP4 203.0.");
    assert.equal(slow.received, "");
    assert.ok(slow.closedAfterMs >= 350, `closed after ${Math.round(slow.closedAfterMs)} ms`);
    assert.deepEqual(dropped, [{ reason: "proxy-header-timeout" }]);
  });
});

describe("PROXY protocol from a peer that is not trusted", () => {
  const { dropped, server } = useEchoListener("10.0.0.0/8");

  it("closes the connection on a v1 or v2 header, whatever address it names", async () => {
    assert.equal((await send(server.port, "PROXY TCP4 10.0.0.5 127.0.0.1 1 2\r\n", get)).received, "");
    assert.equal((await send(server.port, v2Tcp4([10, 0, 0, 5]), get)).received, "");
    assert.deepEqual(dropped, [{ reason: "proxy-header-untrusted" }, { reason: "proxy-header-untrusted" }]);
  });

  it("serves its plain requests with its own address (PROPFIND-like first bytes are not a header)", async () => {
    const answers = parseAnswers(Buffer.from((await send(server.port, get)).received, "latin1"));
    assert.equal(answers[0]?.body, "127.0.0.1");
  });
});

describe("connection caps behind a balancer: each client its own share", () => {
  const { dropped, server } = useEchoListener("127.0.0.0/8", { maxConnections: 20, maxConnectionsPerAddress: 2, loopbackReserve: 0 });

  /** A balanced keep-alive connection for client, answered once: open until the test closes it. */
  const openFor = async (client: string) => {
    const raw = await openRaw(server.port);
    raw.socket.write(`PROXY TCP4 ${client} 127.0.0.1 50000 8080\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n`);
    return raw;
  };
  const answered = async (raw: Awaited<ReturnType<typeof openRaw>>) => {
    for (let i = 0; i < 100 && parseAnswers(raw.received()).length === 0 && !raw.isClosed(); i++) await new Promise((r) => setTimeout(r, 10));
    return parseAnswers(raw.received())[0]?.body;
  };

  it("refuses a client's third connection through the balancer, while five other clients on the same balancer get theirs", async () => {
    const held = [await openFor("203.0.113.1"), await openFor("203.0.113.1")];
    assert.deepEqual(await Promise.all(held.map(answered)), ["203.0.113.1", "203.0.113.1"]);
    const third = await openFor("203.0.113.1");
    await within(third.closed, 3000, "the third connection of one client being closed");
    assert.equal(third.received().length, 0, "the third connection was answered");
    assert.deepEqual(dropped, [{ reason: "max-connections-per-address" }]);
    // Seven connections from the balancer's one address: the per-address cap counts clients, not the balancer.
    const others = await Promise.all(["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4", "198.51.100.5"].map(openFor));
    assert.deepEqual(await Promise.all(others.map(answered)), ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4", "198.51.100.5"]);
    // A share comes back when its connection closes.
    held[0]!.socket.destroy();
    await held[0]!.closed;
    const again = await openFor("203.0.113.1");
    assert.equal(await answered(again), "203.0.113.1");
    for (const raw of [...held, ...others, again]) raw.socket.destroy();
  });
});

describe("the failed-auth throttle behind a balancer", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      settings: { AUTH_FAILURES_PER_MINUTE: "1", AUTH_FAILURES_BURST: "3", TRUSTED_PROXIES: "127.0.0.1" },
    });
  });
  after(() => server.close());

  /** A REST list as HAProxy forwards it for client: one connection, PROXY v1 first. */
  async function listAs(client: string, authorization: string): Promise<number> {
    const request = `GET /v1/v2/settlement-accounts HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization}\r\nConnection: close\r\n\r\n`;
    const { received } = await send(server.port, `PROXY TCP4 ${client} 127.0.0.1 40000 8080\r\n${request}`);
    return parseAnswers(Buffer.from(received, "latin1"))[0]!.status;
  }

  it("charges made-up keys to the client the header names, not to the balancer", async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await listAs("203.0.113.66", `Bearer sk_test_made_up_${i}_0123456789`));
    assert.deepEqual(statuses, [401, 401, 401, 401, 429]);
    // Another client behind the same balancer still gets its 401 (and a valid key its 200).
    assert.equal(await listAs("198.51.100.5", "Bearer sk_test_made_up_elsewhere_0123"), 401);
    assert.equal(await listAs("198.51.100.5", server.bearer()), 200);
  });
});
