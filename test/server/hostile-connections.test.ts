import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import {
  answering,
  frame,
  h2,
  literalHeader,
  openRaw,
  openRawH2,
  parseAnswers,
  requestHeaderBlock,
  startListener,
  waitFor,
  within,
} from "./support/hostile-clients.js";

describe("HTTP/2 header blocks and idle sessions", () => {
  it("destroys a connection whose header block never ends, within the headers timeout", async () => {
    const listener = await startListener(answering("ok"), { headersTimeoutMs: 300, idleTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
    try {
      const client = await openRawH2(listener.port);
      // HEADERS without END_HEADERS: nghttp2 now waits for CONTINUATION, and nothing comes.
      client.send(frame(h2.HEADERS, h2.END_STREAM, 1, requestHeaderBlock("/")));
      const took = await within(client.closed, 3000, "destroying the connection stuck in a header block");
      assert.ok(took >= 250, `closed after ${Math.round(took)} ms, before the headers timeout`);
      assert.deepEqual(listener.dropped, [{ reason: "headers-timeout", protocol: "http2" }]);
    } finally {
      await listener.close();
    }
  });

  it("keeps a session whose stream nghttp2 reset itself, when the client answers PING", async () => {
    const listener = await startListener(answering("ok"), { headersTimeoutMs: 200, idleTimeoutMs: 60_000, requestTimeoutMs: 60_000 });
    try {
      const client = await openRawH2(listener.port, { ackPings: true });
      // An upper-case field name is malformed (RFC 9113 §8.2.1): nghttp2 resets
      // stream 1 without JavaScript ever seeing it, a processed stream id like
      // the start of an unfinished header block.
      client.send(frame(h2.HEADERS, h2.END_STREAM | h2.END_HEADERS, 1, requestHeaderBlock("/", [["X-Upper", "1"]])));
      await delay(1000);
      assert.equal(client.isClosed(), false, "the session was closed as if stuck in a header block");
      // And the session still serves.
      client.send(frame(h2.HEADERS, h2.END_STREAM | h2.END_HEADERS, 3, requestHeaderBlock("/")));
      await waitFor(() => client.frames().some((f) => f.type === h2.DATA && f.streamId === 3), 2000, "the answer on stream 3");
      assert.deepEqual(listener.dropped, []);
    } finally {
      await listener.close();
    }
  });

  it("destroys an idle session that ignores GOAWAY, a grace after it", async () => {
    const listener = await startListener(answering("ok"), {
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
      idleTimeoutMs: 300,
      goawayGraceMs: 200,
    });
    try {
      const client = await openRawH2(listener.port);
      // A header block left open keeps nghttp2's session alive after GOAWAY.
      client.send(frame(h2.HEADERS, h2.END_STREAM, 1, requestHeaderBlock("/")));
      const took = await within(client.closed, 3000, "destroying the idle session after its GOAWAY");
      assert.ok(took >= 450, `closed after ${Math.round(took)} ms, before idle + grace`);
      const goaway = client.frames().find((f) => f.type === h2.GOAWAY);
      assert.ok(goaway, "no GOAWAY before the close");
      assert.equal(goaway.payload.readUInt32BE(4), http2.constants.NGHTTP2_NO_ERROR);
      assert.deepEqual(listener.dropped, [{ reason: "goaway-ignored", protocol: "http2" }]);
    } finally {
      await listener.close();
    }
  });

  it("does not count PINGs as requests: a session that only pings is closed when idle", async () => {
    const listener = await startListener(answering("ok"), { idleTimeoutMs: 300, goawayGraceMs: 200 });
    try {
      const client = await openRawH2(listener.port, { ackPings: true });
      const pings = setInterval(() => {
        if (!client.isClosed()) client.send(frame(h2.PING, 0, 0, Buffer.alloc(8)));
      }, 50);
      try {
        await within(client.closed, 3000, "closing the pinging idle session");
        assert.ok(client.frames().some((f) => f.type === h2.GOAWAY));
      } finally {
        clearInterval(pings);
      }
    } finally {
      await listener.close();
    }
  });
});

describe("responses nobody reads", () => {
  it("HTTP/1.1: answers the request past the pipelining cap 429 and closes after it, handling only the cap", async () => {
    let handled = 0;
    const release: (() => void)[] = [];
    const listener = await startListener(
      (_req, res) => {
        handled++;
        // Held until all requests are in: they all wait for their responses at once.
        release.push(() => {
          res.writeHead(200, { "content-type": "text/plain" });
          res.end("ok");
        });
      },
      { maxPipelinedRequests: 4 },
    );
    try {
      const client = await openRaw(listener.port);
      client.socket.write("GET /x HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipe-5\r\n\r\n".repeat(7));
      await waitFor(() => listener.refused.length === 1, 2000, "refusing the fifth request");
      for (const done of release) done();
      await within(client.closed, 2000, "closing after the 429");
      const answers = parseAnswers(client.received());
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 200, 429],
      );
      const refusal = answers[4]!;
      assert.deepEqual(JSON.parse(refusal.body), {
        status: 429,
        title: "Too Many Requests",
        message: "too many pipelined requests: at most 4 may wait for their responses on one connection",
      });
      assert.equal(refusal.headers["connection"], "close");
      assert.equal(refusal.headers["cache-control"], "no-store");
      assert.equal(refusal.headers["x-request-id"], "pipe-5");
      assert.equal(handled, 4);
      assert.deepEqual(listener.refused, [{ protocol: "http1", status: 429, reason: "too many pipelined requests", requestId: "pipe-5" }]);
    } finally {
      await listener.close();
    }
  });

  it("HTTP/1.1: stops reading a pipelining client that never reads, handles only the cap, and destroys it at the write timeout", async () => {
    // Responses larger than the loopback socket buffers take, so the server's writes stall.
    const body = "y".repeat(1024 * 1024);
    let handled = 0;
    let serverSocket: net.Socket | undefined;
    const listener = await startListener(
      (req, res) => {
        handled++;
        serverSocket = req.socket as net.Socket;
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(body);
      },
      { maxPipelinedRequests: 8, writeTimeoutMs: 400 },
    );
    // Node publishes every request it makes objects for, handled or not.
    let parsed = 0;
    const countParsed = () => parsed++;
    diagnosticsChannel.subscribe("http.server.request.start", countParsed);
    try {
      const client = await openRaw(listener.port);
      client.socket.pause();
      // 20,000 requests (800 KB) at once, and never a byte read.
      client.socket.write("GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n".repeat(20_000));
      await waitFor(() => listener.refused.length > 0, 3000, "refusing the ninth request");
      const stalled = performance.now();
      await waitFor(() => serverSocket?.destroyed === true, 5000, "destroying the connection that never reads");
      assert.ok(performance.now() - stalled >= 300, "destroyed before the write timeout");
      assert.equal(handled, 8, "requests past the cap were handled");
      // The parser stopped at the refused request, not at the end of its 64 KiB read (1,600 requests).
      assert.equal(parsed, 9, "requests parsed past the refusal");
      assert.deepEqual(listener.refused, [{ protocol: "http1", status: 429, reason: "too many pipelined requests", requestId: listener.refused[0]!.requestId }]);
      assert.deepEqual(listener.dropped, [{ reason: "write-timeout", protocol: "http1" }]);
    } finally {
      diagnosticsChannel.unsubscribe("http.server.request.start", countParsed);
      await listener.close();
    }
  });

  it("HTTP/1.1: a slow client that keeps reading gets a response that takes it many write timeouts", async () => {
    // Larger than the loopback socket buffers take at once, and written in one piece.
    const body = "z".repeat(10 * 1024 * 1024);
    // The kernel takes a slow reader's data in bursts of a third of its send
    // buffer (about 1.4 MB here): the timeout must outlast one burst.
    const listener = await startListener(answering(body), { writeTimeoutMs: 1000 });
    try {
      const client = await openRaw(listener.port);
      client.socket.pause();
      const started = performance.now();
      client.socket.write("GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      // At most 128 KiB every 20 ms.
      const reading = setInterval(() => {
        let read = 0;
        let chunk: Buffer | null;
        while (read < 128 * 1024 && (chunk = client.socket.read() as Buffer | null) !== null) read += chunk.length;
      }, 20);
      try {
        await within(client.closed, 30_000, "the whole response");
      } finally {
        clearInterval(reading);
      }
      const took = performance.now() - started;
      const [answer] = parseAnswers(client.received());
      assert.equal(answer?.status, 200, `the response was cut after ${client.received().length} bytes`);
      assert.equal(answer.body.length, body.length);
      assert.ok(took > 2000, `the response took ${Math.round(took)} ms: too fast to test the write timeout`);
      assert.deepEqual(listener.dropped, []);
    } finally {
      await listener.close();
    }
  });

  it("HTTP/2: refuses new streams once the session has maxUnsentBytes unsent, and destroys a zero-window client at the write timeout", async () => {
    const body = "w".repeat(100 * 1024);
    let handled = 0;
    const listener = await startListener(
      (_req, res) => {
        handled++;
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(body);
      },
      { maxUnsentBytes: 150 * 1024, writeTimeoutMs: 500 },
    );
    // A client that never opens its flow-control window: no DATA can ever be sent to it.
    const session = http2.connect(`http://127.0.0.1:${listener.port}`, { settings: { initialWindowSize: 0 } });
    session.on("error", () => {});
    try {
      const closed = new Promise<void>((resolve) => session.once("close", () => resolve()));
      const open = () => {
        const stream = session.request({ ":path": "/openapi.json", "x-request-id": "zero-window" });
        stream.on("error", () => {});
        return stream;
      };
      const first = open();
      await new Promise((resolve) => first.once("response", resolve));
      const second = open();
      await new Promise((resolve) => second.once("response", resolve));
      // 200 KiB now wait for a window that never opens.
      const third = open();
      await within(new Promise((resolve) => third.once("close", resolve)), 2000, "refusing the third stream");
      assert.equal(third.rstCode, http2.constants.NGHTTP2_REFUSED_STREAM);
      assert.equal(handled, 2);
      assert.deepEqual(listener.refused, [
        {
          protocol: "http2",
          status: 503,
          reason: "responses not read",
          requestId: "zero-window",
          http2ErrorCode: http2.constants.NGHTTP2_REFUSED_STREAM,
        },
      ]);
      const started = performance.now();
      await within(closed, 5000, "destroying the zero-window session");
      assert.ok(performance.now() - started >= 200);
      assert.deepEqual(listener.dropped, [{ reason: "write-timeout", protocol: "http2" }]);
    } finally {
      session.destroy();
      await listener.close();
    }
  });

  it("HTTP/2: a zero-window client cannot keep its session alive with PINGs", async () => {
    const listener = await startListener(answering("p".repeat(200 * 1024)), { writeTimeoutMs: 400 });
    try {
      const client = await openRawH2(listener.port, { ackPings: true });
      // SETTINGS_INITIAL_WINDOW_SIZE (0x4) = 0: no stream may be sent DATA.
      const zeroWindow = Buffer.alloc(6);
      zeroWindow.writeUInt16BE(0x4, 0);
      client.send(frame(h2.SETTINGS, 0, 0, zeroWindow), frame(h2.HEADERS, h2.END_STREAM | h2.END_HEADERS, 1, requestHeaderBlock("/")));
      const pings = setInterval(() => {
        if (!client.isClosed()) client.send(frame(h2.PING, 0, 0, Buffer.alloc(8)));
      }, 20);
      try {
        await within(client.closed, 5000, "destroying the pinging zero-window session");
      } finally {
        clearInterval(pings);
      }
      assert.ok(client.frames().filter((f) => f.type === h2.PING && f.flags & h2.ACK).length > 5, "the server stopped answering PINGs");
      assert.deepEqual(listener.dropped, [{ reason: "write-timeout", protocol: "http2" }]);
    } finally {
      await listener.close();
    }
  });

  it("HTTP/2: a slow client that keeps reading gets a large response", async () => {
    const body = "s".repeat(1024 * 1024);
    const listener = await startListener(answering(body), { writeTimeoutMs: 300 });
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    try {
      const stream = session.request({ ":path": "/big" });
      let got = 0;
      // 16 KiB then a 25 ms pause: about 650 KB/s, so the response takes 1.5 s or more.
      stream.on("data", (chunk: Buffer) => {
        got += chunk.length;
        stream.pause();
        setTimeout(() => stream.resume(), 25);
      });
      await within(new Promise((resolve) => stream.once("end", resolve)), 30_000, "the whole response");
      assert.equal(got, body.length);
      assert.deepEqual(listener.dropped, []);
    } finally {
      session.destroy();
      await listener.close();
    }
  });
});

describe("connection caps", () => {
  /** tryRequest sends one request on a new connection from address: the status, or "refused" when closed unanswered. */
  async function tryRequest(port: number, address: string, hold: boolean) {
    const client = await openRaw(port, address);
    client.socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n${hold ? "" : "Connection: close\r\n"}\r\n`);
    await Promise.race([client.closed, waitFor(() => parseAnswers(client.received()).length > 0, 3000, "an answer").catch(() => {})]);
    const [answer] = parseAnswers(client.received());
    return { client, outcome: answer ? answer.status : "refused" };
  }

  it("refuses connections beyond the per-address and total caps without serving them, keeping a loopback reserve", async () => {
    const listener = await startListener(answering("ok"), { maxConnections: 3, maxConnectionsPerAddress: 2, loopbackReserve: 1 });
    const held: { client: Awaited<ReturnType<typeof openRaw>> }[] = [];
    try {
      const outcome = async (address: string, hold = true) => {
        const result = await tryRequest(listener.port, address, hold);
        if (hold && result.outcome !== "refused") held.push(result);
        return result.outcome;
      };
      assert.equal(await outcome("127.0.0.2"), 200);
      assert.equal(await outcome("127.0.0.2"), 200);
      assert.equal(await outcome("127.0.0.2"), "refused", "a third connection from one address");
      assert.equal(await outcome("127.0.0.3"), 200);
      assert.equal(await outcome("127.0.0.4"), "refused", "a fourth connection in all");
      // The host's own health check still gets in, on the reserve.
      assert.equal(await outcome("127.0.0.1"), 200);
      assert.equal(await outcome("127.0.0.1"), "refused", "past the loopback reserve");
      assert.deepEqual(
        listener.dropped.map((d) => d.reason),
        ["max-connections-per-address", "max-connections", "max-connections"],
      );
      // Connections that close give their slots back: one from 127.0.0.2 and the loopback one.
      const gone = [held[0]!.client, held[3]!.client];
      assert.equal(gone[1]!.socket.localAddress, "127.0.0.1");
      for (const client of gone) client.socket.destroy();
      await delay(100);
      assert.equal(await outcome("127.0.0.2"), 200);
      for (const { client } of held) assert.equal(client.isClosed(), gone.includes(client), "a held connection was closed");
    } finally {
      for (const { client } of held) client.socket.destroy();
      await listener.close();
    }
  });

  it("serves HTTP/1.1 and HTTP/2 alike within the caps, and counts a connection from the first byte", async () => {
    const listener = await startListener(answering("ok"), { maxConnections: 1, loopbackReserve: 0 });
    try {
      const session = http2.connect(`http://127.0.0.1:${listener.port}`);
      const stream = session.request({ ":path": "/" });
      stream.resume();
      await new Promise((resolve) => stream.once("end", resolve));
      // The h2 session holds the one slot: an HTTP/1.1 request is turned away.
      const outcome = await new Promise<string>((resolve) => {
        http
          .get(`http://127.0.0.1:${listener.port}/`, { agent: false }, (res) => resolve(String(res.statusCode)))
          .on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
      });
      assert.equal(outcome, "ECONNRESET");
      assert.deepEqual(listener.dropped, [{ reason: "max-connections" }]);
      session.destroy();
    } finally {
      await listener.close();
    }
  });
});
