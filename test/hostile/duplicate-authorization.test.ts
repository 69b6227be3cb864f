import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { captureLogs, waitForLine, type CapturedLogs } from "../observability/support/capture-logs.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { flagEndStream, frameType, rawHttp2Request } from "./support/raw-http2.js";
import { connectOutcome, envelope, grpcWebOutcome, http1 } from "./support/wire.js";

const listPath = "/payments.v2.PaymentIntentService/ListPaymentIntents";
const createPath = "/payments.v2.PaymentIntentService/CreatePaymentIntent";
const refusal = "send the Authorization header once";
const createBody = (reference: string) => JSON.stringify({ amount: 500, customerEmail: "ada@example.com", clientReference: reference });

// Fails on e1d5b66: Node kept the first Authorization header and connect-node the first value: "first wins", 200.
describe("a request with more than one Authorization header", () => {
  let server: TestServer;
  let logs: CapturedLogs;
  let seq = 0;
  /** Pairs of values: the same key twice, two merchants' keys, a good key after a bad one. */
  let pairs: [string, [string, string]][];

  before(async () => {
    logs = captureLogs();
    server = await startTestServer({ logger: logs.logger, store: "memory" });
    pairs = [
      ["the same key twice", [server.bearer(), server.bearer()]],
      ["two merchants' keys", [server.bearer(), server.bearer("merchantB")]],
      ["a wrong key, then a good one", ["Bearer sk_test_not_a_real_key_at_all", server.bearer()]],
    ];
  });
  after(() => server.close());

  const lineFor = (requestId: string) => waitForLine(logs, (l) => l["msg"] === "request" && l["requestId"] === requestId);

  it("is 401 over REST (HTTP/1.1), with WWW-Authenticate, on reads and creates, and creates nothing", async () => {
    for (const [name, [first, second]] of pairs) {
      const requestId = `dup-auth-${++seq}`;
      const list = await http1(server.port, "GET", "/v1/v2/payment-intents", ["Authorization", first, "authorization", second, "X-Request-Id", requestId]);
      assert.equal(list.status, 401, name);
      assert.equal(list.headers["www-authenticate"], "Bearer");
      assert.deepEqual(JSON.parse(list.body.toString()), { status: 401, title: "Unauthorized", message: refusal });
      const line = await lineFor(requestId);
      assert.deepEqual([line["status"], line["merchantId"]], [401, undefined], name);

      const created = await http1(
        server.port,
        "POST",
        "/v1/v2/payment-intents",
        ["Authorization", first, "Authorization", second, "Content-Type", "application/json"],
        createBody(`dup-auth-${seq}`),
      );
      assert.deepEqual([created.status, JSON.parse(created.body.toString()).message], [401, refusal], name);
    }
    assert.deepEqual(await server.intents.list({ livemode: false, merchantId: "merchantA", limit: 10, now: new Date() }), []);
  });

  it("is 401 over REST (HTTP/2)", async () => {
    for (const [name, [first, second]] of pairs) {
      const requestId = `dup-auth-${++seq}`;
      const exchange = await rawHttp2Request(server.port, [
        [":method", "GET"],
        [":scheme", "http"],
        [":path", "/v1/v2/payment-intents"],
        [":authority", "127.0.0.1"],
        ["authorization", first],
        ["authorization", second],
        ["x-request-id", requestId],
      ]);
      assert.ok(exchange.frames.some((f) => f.type === frameType.headers), name);
      const line = await lineFor(requestId);
      assert.deepEqual([line["protocol"], line["status"], line["merchantId"]], ["rest", 401, undefined], name);
    }
  });

  it("is Unauthenticated over Connect (HTTP/1.1)", async () => {
    for (const [name, [first, second]] of pairs) {
      const outcome = connectOutcome(
        await http1(server.port, "POST", createPath, ["Content-Type", "application/json", "Authorization", first, "Authorization", second], createBody(`dup-auth-${++seq}`)),
      );
      assert.deepEqual([outcome.status, outcome.code, outcome.message], [401, "Unauthenticated", refusal], name);
    }
    assert.deepEqual(await server.intents.list({ livemode: false, merchantId: "merchantA", limit: 10, now: new Date() }), []);
  });

  it("is Unauthenticated over gRPC-Web (HTTP/1.1)", async () => {
    for (const [name, [first, second]] of pairs) {
      const outcome = grpcWebOutcome(
        await http1(server.port, "POST", listPath, ["Content-Type", "application/grpc-web+proto", "Authorization", first, "Authorization", second], envelope(0, new Uint8Array())),
      );
      assert.deepEqual([outcome.code, outcome.message, outcome.messages], ["Unauthenticated", refusal, []], name);
    }
  });

  it("is Unauthenticated over gRPC (two authorization fields in one HTTP/2 header block)", async () => {
    for (const [name, [first, second]] of pairs) {
      const requestId = `dup-auth-${++seq}`;
      const exchange = await rawHttp2Request(
        server.port,
        [
          [":method", "POST"],
          [":scheme", "http"],
          [":path", listPath],
          [":authority", "127.0.0.1"],
          ["content-type", "application/grpc"],
          ["te", "trailers"],
          ["authorization", first],
          ["authorization", second],
          ["x-request-id", requestId],
        ],
        envelope(0, new Uint8Array()),
      );
      // A Trailers-Only answer: one HEADERS frame that ends the stream, no message.
      assert.deepEqual(
        exchange.frames.map((f) => [f.type, Boolean(f.flags & flagEndStream)]),
        [[frameType.headers, true]],
        name,
      );
      const line = await lineFor(requestId);
      assert.deepEqual([line["protocol"], line["code"], line["merchantId"]], ["grpc", "Unauthenticated", undefined], name);
    }
  });
});
