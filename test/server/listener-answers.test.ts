import assert from "node:assert/strict";
import http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { NodeHandler } from "../../src/http/node-http.js";
import {
  frame,
  h2,
  literalHeader,
  openRaw,
  openRawH2,
  parseAnswers,
  startListener,
  waitFor,
  within,
  type Listener,
  type RawAnswer,
} from "./support/hostile-clients.js";

/** The handler of these tests: it must never see what the listener answers itself. */
let handled: string[] = [];
const handler: NodeHandler = (req, res) => {
  handled.push(`${req.method} ${req.url}`);
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("handled");
};

/** ids numbers the request ids the listener generates, so a test can name the one it expects. */
function ids() {
  let next = 0;
  return () => `generated-${++next}`;
}

/** exchange writes raw bytes on a new HTTP/1.1 connection and reads what comes back until the server closes. */
async function exchange(listener: Listener, request: string): Promise<RawAnswer> {
  const client = await openRaw(listener.port);
  client.socket.write(request);
  await within(client.closed, 3000, "the server closing the connection after its answer");
  const answers = parseAnswers(client.received());
  assert.equal(answers.length, 1, `expected one answer, got ${JSON.stringify(client.received().toString("latin1"))}`);
  return answers[0]!;
}

/** expectAnswer checks the error shape and headers every answer of the listener carries. */
function expectAnswer(answer: RawAnswer, status: number, title: string, message: string, requestId: string) {
  assert.equal(answer.status, status);
  assert.deepEqual(JSON.parse(answer.body), { status, title, message });
  assert.equal(answer.headers["content-type"], "application/json");
  assert.equal(answer.headers["cache-control"], "no-store");
  assert.equal(answer.headers["x-request-id"], requestId);
  assert.equal(answer.headers["connection"], "close");
}

describe("answers the HTTP/1.1 listener writes itself", () => {
  let listener: Listener;
  before(async () => {
    listener = await startListener(handler, { headersTimeoutMs: 300, requestTimeoutMs: 600 }, { generateRequestId: ids() });
  });
  after(() => listener.close());

  const cases: {
    name: string;
    request: string;
    status: number;
    title: string;
    message: string;
    requestId: string;
    reason: string;
  }[] = [
    {
      name: "an Expect other than 100-continue: 417",
      request: "POST /v1/v2/payment-intents HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nX-Request-Id: trace-417\r\nContent-Length: 2\r\n\r\n{}",
      status: 417,
      title: "Expectation Failed",
      message: "only Expect: 100-continue is supported",
      requestId: "trace-417",
      reason: "unsupported Expect",
    },
    {
      name: "CONNECT: 501",
      request: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
      status: 501,
      title: "Not Implemented",
      message: "CONNECT is not supported: this server is not a proxy",
      requestId: "generated-",
      reason: "CONNECT",
    },
    {
      name: "an HTTP/1.1 request without Host: 400",
      request: "GET /healthz HTTP/1.1\r\nX-Request-Id: trace-host\r\n\r\n",
      status: 400,
      title: "Bad Request",
      message: "the Host header is required",
      requestId: "trace-host",
      reason: "missing Host header",
    },
    {
      name: "a method Node's parser does not know: 400",
      request: "FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
      status: 400,
      title: "Bad Request",
      message: "malformed HTTP request",
      requestId: "generated-",
      reason: "HPE_INVALID_METHOD",
    },
    {
      name: "request headers over Node's 16 KiB: 431",
      request: `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(17 * 1024)}\r\n\r\n`,
      status: 431,
      title: "Request Header Fields Too Large",
      message: "request headers are too large",
      requestId: "generated-",
      reason: "HPE_HEADER_OVERFLOW",
    },
  ];
  for (const c of cases) {
    it(`answers ${c.name}, with the error body, X-Request-Id and no-store, and reports it`, async () => {
      handled = [];
      const before = listener.refused.length;
      const answer = await exchange(listener, c.request);
      const requestId = c.requestId.endsWith("-") ? answer.headers["x-request-id"]! : c.requestId;
      assert.match(requestId, /^(generated-\d+|trace-.+)$/);
      expectAnswer(answer, c.status, c.title, c.message, requestId);
      assert.deepEqual(handled, [], "the handler saw the request");
      const reported = listener.refused.slice(before);
      assert.equal(reported.length, 1);
      const { durationMs, ...event } = reported[0]!;
      assert.deepEqual(event, { protocol: "http1", status: c.status, reason: c.reason, requestId });
      if (durationMs !== undefined) assert.ok(durationMs >= 0);
    });
  }

  it("answers headers that take too long 408, and reports how long they took", async () => {
    const before = listener.refused.length;
    const client = await openRaw(listener.port);
    client.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    const trickle = setInterval(() => {
      if (!client.isClosed()) client.socket.write("X-Slow: 1\r\n");
    }, 50);
    try {
      await within(client.closed, 3000, "the 408");
    } finally {
      clearInterval(trickle);
    }
    const [answer] = parseAnswers(client.received());
    assert.ok(answer);
    const requestId = answer.headers["x-request-id"]!;
    expectAnswer(answer, 408, "Request Timeout", "the request did not arrive in time", requestId);
    const event = listener.refused[before]!;
    assert.deepEqual({ ...event, durationMs: 0 }, { protocol: "http1", status: 408, reason: "ERR_HTTP_REQUEST_TIMEOUT", requestId, durationMs: 0 });
    assert.ok(event.durationMs! >= 250, `durationMs ${event.durationMs}`);
  });

  it("does not handle requests pipelined behind one it answered with Connection: close", async () => {
    handled = [];
    const client = await openRaw(listener.port);
    client.socket.write("GET /first HTTP/1.1\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n");
    await within(client.closed, 3000, "closing after the 400");
    assert.deepEqual(
      parseAnswers(client.received()).map((a) => a.status),
      [400],
    );
    assert.deepEqual(handled, []);
  });

  it("still hands ordinary requests to the handler", async () => {
    handled = [];
    const answer = await exchange(listener, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert.equal(answer.status, 200);
    assert.equal(answer.body, "handled");
    assert.deepEqual(handled, ["GET /healthz"]);
  });
});

describe("answers and resets the HTTP/2 listener reports", () => {
  it("answers CONNECT 501 with the error body, X-Request-Id and no-store", async () => {
    const listener = await startListener(handler, {}, { generateRequestId: ids() });
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    try {
      handled = [];
      const stream = session.request({ ":method": "CONNECT", ":authority": "example.com:443" });
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once("response", resolve));
      let body = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (body += chunk));
      await new Promise((resolve) => stream.once("end", resolve));
      assert.equal(headers[":status"], 501);
      assert.equal(headers["content-type"], "application/json");
      assert.equal(headers["cache-control"], "no-store");
      assert.equal(headers["x-request-id"], "generated-1");
      assert.deepEqual(JSON.parse(body), { status: 501, title: "Not Implemented", message: "CONNECT is not supported: this server is not a proxy" });
      assert.deepEqual(handled, []);
      assert.deepEqual(listener.refused, [{ protocol: "http2", status: 501, reason: "CONNECT", requestId: "generated-1" }]);
    } finally {
      session.destroy();
      await listener.close();
    }
  });

  /** A handler that answers after 200 ms, or starts its answer at once and finishes it then. */
  function slowHandler(startAtOnce: boolean): NodeHandler {
    return (req, res) => {
      (req as NodeJS.ReadableStream).resume();
      if (startAtOnce) {
        res.writeHead(201, { "content-type": "text/plain" });
        (res as unknown as NodeJS.WritableStream).write("partial");
      }
      setTimeout(() => {
        if (!startAtOnce) res.writeHead(200, { "content-type": "text/plain" });
        res.end("done");
      }, 200);
    };
  }

  for (const { startAtOnce, status } of [
    { startAtOnce: false, status: 400 },
    { startAtOnce: true, status: 201 },
  ]) {
    it(`reports a stream reset for a protocol error with the status the client got (${status})`, async () => {
      const listener = await startListener(slowHandler(startAtOnce), {});
      try {
        const client = await openRawH2(listener.port, { ackPings: true });
        // content-length 5, then 10 bytes of body: malformed (RFC 9113 §8.1.1).
        const block = Buffer.concat([
          Buffer.from([0x83, 0x86]),
          literalHeader(":path", "/upload"),
          literalHeader(":authority", "127.0.0.1"),
          literalHeader("content-length", "5"),
          literalHeader("x-request-id", "trace-reset"),
        ]);
        client.send(frame(h2.HEADERS, h2.END_HEADERS, 1, block));
        if (startAtOnce) await waitFor(() => client.frames().some((f) => f.type === h2.HEADERS), 2000, "the response headers");
        client.send(frame(h2.DATA, h2.END_STREAM, 1, Buffer.from("0123456789")));
        await waitFor(() => listener.refused.length > 0, 2000, "the report of the reset");
        await delay(300);
        assert.equal(listener.refused.length, 1);
        const { durationMs, http2ErrorCode, ...event } = listener.refused[0]!;
        assert.match(event.reason, /^stream reset: [A-Z_]+$/);
        assert.deepEqual(event, { protocol: "http2", status, reason: event.reason, requestId: "trace-reset" });
        assert.ok(http2ErrorCode !== undefined && http2ErrorCode !== http2.constants.NGHTTP2_NO_ERROR);
        assert.ok(durationMs !== undefined && durationMs >= 0);
        client.socket.destroy();
      } finally {
        await listener.close();
      }
    });
  }

  it("reports a stream whose request body does not arrive in time as 408", async () => {
    const listener = await startListener(slowHandler(false), { headersTimeoutMs: 300, requestTimeoutMs: 300 });
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    try {
      const stream = session.request({ ":method": "POST", ":path": "/upload", "x-request-id": "trace-slow-body" });
      stream.on("error", () => {});
      stream.write("{");
      await within(new Promise((resolve) => stream.once("close", resolve)), 3000, "the reset");
      assert.equal(stream.rstCode, http2.constants.NGHTTP2_CANCEL);
      assert.deepEqual(listener.refused, [
        {
          protocol: "http2",
          status: 408,
          reason: "request did not arrive in time",
          requestId: "trace-slow-body",
          durationMs: 300,
          http2ErrorCode: http2.constants.NGHTTP2_CANCEL,
        },
      ]);
    } finally {
      session.destroy();
      await listener.close();
    }
  });

  it("does not report a client's own CANCEL, which the request log sees as an abort", async () => {
    const listener = await startListener(slowHandler(false), {});
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    try {
      const stream = session.request({ ":path": "/slow" });
      stream.on("error", () => {});
      await delay(50);
      stream.close(http2.constants.NGHTTP2_CANCEL);
      await delay(400);
      assert.deepEqual(listener.refused, []);
    } finally {
      session.destroy();
      await listener.close();
    }
  });
});
