import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { CreatePaymentIntentRequestSchema, PaymentIntentSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import { uniqueReference } from "../support/rest-client.js";
import { envelope as frame, splitEnvelopes as framesOf } from "../hostile/support/wire.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const createPath = "/payments.v2.PaymentIntentService/CreatePaymentIntent";

/** The trailer frame's lines as a record. */
function trailersOf(data: Buffer): Record<string, string> {
  const lines = data.toString("latin1").split("\r\n").filter((line) => line !== "");
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]));
}

interface TextAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as sent: base64 text. */
  text: string;
}

/**
 * post sends a gRPC-Web text call over HTTP/1.1 as the official grpc-web
 * client does by default: Content-Type application/grpc-web-text, base64 body,
 * X-Grpc-Web; the body goes out in the given pieces.
 */
function post(server: TestServer, pieces: string[], headers: Record<string, string> = {}): Promise<TextAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.url}${createPath}`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web-text", accept: "application/grpc-web-text", "x-grpc-web": "1", ...headers },
    });
    request.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("latin1") }));
    });
    request.on("error", reject);
    for (const piece of pieces) request.write(piece);
    request.end();
  });
}

function requestFrame(clientReference: string): Buffer {
  const message = create(CreatePaymentIntentRequestSchema, { amount: 50000n, customerEmail: "ada@example.com", clientReference });
  return frame(0, toBinary(CreatePaymentIntentRequestSchema, message));
}

describe("gRPC-Web text mode (application/grpc-web-text) over HTTP/1.1", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it("answers a base64 call in base64: the message frame, then the trailer frame with grpc-status 0", async () => {
    const body = requestFrame(uniqueReference("text")).toString("base64");
    const answer = await post(server, [body], { authorization: server.bearer() });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers["content-type"], "application/grpc-web-text+proto");
    assert.match(String(answer.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
    assert.match(answer.text, /^[A-Za-z0-9+/]+=*$/, "the body is base64");
    const [message, trailer, ...rest] = framesOf(Buffer.from(answer.text, "base64"));
    assert.deepEqual(rest, []);
    assert.equal(message!.flags, 0);
    const intent = fromBinary(PaymentIntentSchema, message!.data);
    assert.match(intent.id, /^pi_/);
    assert.equal(intent.amount, 50000n);
    assert.equal(trailer!.flags, 0x80);
    assert.deepEqual(trailersOf(trailer!.data), { "grpc-status": "0" });
  });

  it("replays an identical create, marked idempotent-replayed, and accepts a body sent as several padded base64 pieces", async () => {
    const bytes = requestFrame(uniqueReference("text-replay"));
    const first = await post(server, [bytes.toString("base64")], { authorization: server.bearer() });
    const firstIntent = fromBinary(PaymentIntentSchema, framesOf(Buffer.from(first.text, "base64"))[0]!.data);
    assert.equal(first.headers["idempotent-replayed"], undefined);
    // Pieces of 7 and the rest bytes, each base64-encoded on its own: padding inside the body.
    const pieces = [bytes.subarray(0, 7).toString("base64"), bytes.subarray(7).toString("base64")];
    assert.ok(pieces[0]!.endsWith("="), "the first piece is padded");
    const replay = await post(server, pieces, { authorization: server.bearer() });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers["idempotent-replayed"], "true");
    const [message, trailer] = framesOf(Buffer.from(replay.text, "base64"));
    assert.equal(fromBinary(PaymentIntentSchema, message!.data).id, firstIntent.id);
    assert.deepEqual(trailersOf(trailer!.data), { "grpc-status": "0" });
  });

  const failures = [
    {
      name: "no API key: Unauthenticated",
      pieces: () => [requestFrame(uniqueReference("text-nokey")).toString("base64")],
      keyed: false,
      code: Code.Unauthenticated,
      message: "missing Authorization header: send 'Authorization: Bearer <api key>'",
    },
    {
      name: "a body that is not base64: InvalidArgument",
      pieces: () => ["AAAA*AAA"],
      keyed: true,
      code: Code.InvalidArgument,
      message: "the gRPC-Web text body is not valid base64",
    },
    {
      name: "a binary body sent as text: InvalidArgument",
      pieces: () => [requestFrame(uniqueReference("text-binary")).toString("latin1")],
      keyed: true,
      code: Code.InvalidArgument,
      message: "the gRPC-Web text body is not valid base64",
    },
  ];
  for (const failure of failures) {
    it(`answers ${failure.name}, as a base64 trailer frame`, async () => {
      const answer = await post(server, failure.pieces(), failure.keyed ? { authorization: server.bearer() } : {});
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["content-type"], "application/grpc-web-text+proto");
      const frames = framesOf(Buffer.from(answer.text, "base64"));
      assert.equal(frames.length, 1);
      assert.equal(frames[0]!.flags, 0x80);
      // Printable ASCII goes into grpc-message as is (percent-encoding is for the rest).
      assert.deepEqual(trailersOf(frames[0]!.data), { "grpc-status": String(failure.code), "grpc-message": failure.message });
    });
  }
});
