import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { CreatePaymentIntentRequestSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import { captureLogs, waitForLine, type CapturedLogs } from "../observability/support/capture-logs.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { envelope, wireProtocols, type WireProtocol } from "./support/wire.js";

const createPath = "/payments.v2.PaymentIntentService/CreatePaymentIntent";

/** A well-formed create, as binary protobuf. */
const validCreate = Buffer.from(
  toBinary(CreatePaymentIntentRequestSchema, create(CreatePaymentIntentRequestSchema, { amount: 500n, customerEmail: "ada@example.com", clientReference: "decode-1" })),
);

/**
 * customer_email (field 2, length-delimited) holding bytes that are not
 * UTF-8: a lone continuation byte, an overlong "/", and an encoded UTF-16
 * surrogate (U+D800), each inside an otherwise well-formed message.
 */
const invalidUtf8Strings: Record<string, number[]> = {
  "a lone continuation byte": [0x61, 0x80, 0x62],
  "an overlong encoding": [0xc0, 0xaf],
  "an encoded surrogate (U+D800)": [0xed, 0xa0, 0x80],
};
const withEmailBytes = (bytes: number[]) => Buffer.concat([Buffer.from([0x08, 0xf4, 0x03, 0x12, bytes.length]), Buffer.from(bytes)]);

/** Bytes no protobuf parser accepts. */
const malformedProtobuf: Record<string, Buffer> = {
  "a truncated varint": Buffer.from([0x08, 0xff, 0xff]),
  "a length past the end": Buffer.from([0x12, 0x20, 0x61]),
  "wire type 7": Buffer.from([0x0f, 0x00]),
  "an end-group tag without a start": Buffer.from([0x0c]),
};

interface Case {
  name: string;
  protocols: (p: WireProtocol) => boolean;
  /** The request body as the protocol sends it. */
  payload: (p: WireProtocol) => Buffer;
  message: string;
}

const frame = (p: WireProtocol, data: Buffer, flags = 0) => (p.enveloped ? envelope(flags, data) : data);

const cases: Case[] = [
  ...Object.entries(malformedProtobuf).map(([name, bytes]) => ({
    name: `malformed protobuf: ${name}`,
    protocols: (p: WireProtocol) => p.binary,
    payload: (p: WireProtocol) => frame(p, bytes),
    message: "the request message is not valid protobuf",
  })),
  ...Object.entries(invalidUtf8Strings).map(([name, bytes]) => ({
    name: `a string field with ${name}`,
    protocols: (p: WireProtocol) => p.binary,
    payload: (p: WireProtocol) => frame(p, withEmailBytes(bytes)),
    message: "the request message has a string field that is not valid UTF-8",
  })),
  {
    name: "a JSON body that is not UTF-8",
    protocols: (p) => !p.binary,
    payload: () => Buffer.concat([Buffer.from('{"customerEmail":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
    message: "request body is not valid UTF-8",
  },
  {
    name: "a JSON body that is not JSON",
    protocols: (p) => !p.binary,
    payload: () => Buffer.from('{"amount": 5,'),
    message: "request body is not valid JSON",
  },
];

// Fails on e1d5b66: connect-node answered these Internal (Connect: 500) with the parser's text ("parse binary: premature EOF").
describe("RPC requests that do not decode", () => {
  let server: TestServer;
  let logs: CapturedLogs;
  let seq = 0;

  before(async () => {
    logs = captureLogs();
    server = await startTestServer({ logger: logs.logger, store: "memory" });
  });
  after(() => server.close());

  for (const c of cases) {
    for (const protocol of wireProtocols.filter(c.protocols)) {
      for (const withKey of [false, true]) {
        it(`answers ${c.name} over ${protocol.name} ${withKey ? "with" : "without"} a key: InvalidArgument "${c.message}", logged at info`, async () => {
          const requestId = `decode-${++seq}`;
          const headers: Record<string, string> = { "x-request-id": requestId };
          if (withKey) headers["authorization"] = server.bearer();
          const outcome = await protocol.call(server.port, createPath, c.payload(protocol), headers);

          assert.deepEqual(
            { status: outcome.status, code: outcome.code, message: outcome.message },
            { status: protocol.label === "connect" ? 400 : 200, code: "InvalidArgument", message: c.message },
          );
          assert.deepEqual(outcome.messages, [], "no response message");

          const line = await waitForLine(logs, (l) => l["msg"] === "request" && l["requestId"] === requestId);
          const { time: _t, pid: _p, hostname: _h, durationMs: _d, ...rest } = line;
          // The message is decoded before the key is looked at, so no merchant is known either way.
          assert.deepEqual(rest, {
            level: "info",
            msg: "request",
            requestId,
            protocol: protocol.label,
            method: "POST",
            route: createPath,
            status: protocol.label === "connect" ? 400 : 200,
            code: "InvalidArgument",
          });
          assert.deepEqual(
            logs.lines().filter((l) => l["requestId"] === requestId).map((l) => l["msg"]),
            ["request"],
            "nothing else is logged for the request (no error line, no stack)",
          );
        });
      }
    }
  }

  it("stored nothing for any of them", async () => {
    assert.deepEqual(await server.intents.list({ livemode: false, merchantId: "merchantA", limit: 10, now: new Date() }), []);
  });
});

interface FramingCase {
  name: string;
  protocols: (p: WireProtocol) => boolean;
  payload: (p: WireProtocol) => Buffer;
  headers?: (p: WireProtocol) => Record<string, string>;
  code: string;
  message: string;
}

/** The header that names a request's compression: per message for gRPC and gRPC-Web, the whole body for Connect unary. */
const encodingHeader = (p: WireProtocol, value: string): Record<string, string> => (p.enveloped ? { "grpc-encoding": value } : { "content-encoding": value });
const compressed = (p: WireProtocol, data: Buffer) => (p.enveloped ? envelope(0x01, data) : data);

const framingCases: FramingCase[] = [
  // Zero or two messages for a unary method is Unimplemented, as the Connect conformance suite expects (issue 22 §3).
  { name: "an empty body", protocols: (p) => p.enveloped, payload: () => Buffer.alloc(0), code: "Unimplemented", message: "the request carries no message" },
  {
    name: "two messages for a unary method",
    protocols: (p) => p.enveloped,
    payload: () => Buffer.concat([envelope(0, validCreate), envelope(0, validCreate)]),
    code: "Unimplemented",
    message: "the method takes exactly one request message",
  },
  {
    // gRPC: a compressed flag with no grpc-encoding is a protocol error, Internal (issue 22 §3).
    name: "a frame flagged compressed without grpc-encoding",
    protocols: (p) => p.enveloped,
    payload: () => envelope(0x01, validCreate),
    code: "Internal",
    message: "the message is flagged compressed, but the request names no grpc-encoding",
  },
  {
    name: "a frame cut short",
    protocols: (p) => p.enveloped,
    payload: () => envelope(0, validCreate).subarray(0, 12),
    code: "InvalidArgument",
    message: "the request ends inside a message frame",
  },
  {
    name: "a frame announcing 4 GiB",
    protocols: (p) => p.enveloped,
    payload: () => Buffer.from([0x00, 0xff, 0xff, 0xff, 0xff, 0x08]),
    code: "ResourceExhausted",
    message: "message is larger than 65536 bytes",
  },
  {
    name: "gzip that is not gzip",
    protocols: () => true,
    payload: (p) => compressed(p, Buffer.from("not gzip at all")),
    headers: (p) => encodingHeader(p, "gzip"),
    code: "InvalidArgument",
    message: "the compressed request is not valid gzip",
  },
  {
    name: "gzip that inflates past 64 KiB",
    protocols: () => true,
    payload: (p) => compressed(p, gzipSync(Buffer.alloc(1024 * 1024, 0x0a))),
    headers: (p) => encodingHeader(p, "gzip"),
    code: "ResourceExhausted",
    message: "message is larger than 65536 bytes",
  },
  {
    name: "an encoding the service does not speak",
    protocols: () => true,
    payload: (p) => compressed(p, Buffer.from("x")),
    headers: (p) => encodingHeader(p, "br"),
    code: "Unimplemented",
    message: "compression br is not supported; use gzip or identity",
  },
];

/** Connect's HTTP status for a code (connectrpc.com/docs/protocol#error-codes). */
const connectStatus: Record<string, number> = { InvalidArgument: 400, ResourceExhausted: 429, Unimplemented: 501 };

// Fails on e1d5b66: connect-node answered with its own texts ("protocol error: incomplete envelope", "decompression
// failed", "message size 4294967295 is larger than configured readMaxBytes"), several as Internal.
describe("RPC requests whose framing or compression is wrong", () => {
  let server: TestServer;
  let logs: CapturedLogs;
  let seq = 0;

  before(async () => {
    logs = captureLogs();
    server = await startTestServer({ logger: logs.logger, store: "memory" });
  });
  after(() => server.close());

  for (const c of framingCases) {
    for (const protocol of wireProtocols.filter(c.protocols)) {
      it(`answers ${c.name} over ${protocol.name} without a key: ${c.code} "${c.message}"`, async () => {
        const requestId = `framing-${++seq}`;
        const outcome = await protocol.call(server.port, createPath, c.payload(protocol), { "x-request-id": requestId, ...c.headers?.(protocol) });
        const status = protocol.label === "connect" ? connectStatus[c.code]! : 200;
        assert.deepEqual({ status: outcome.status, code: outcome.code, message: outcome.message }, { status, code: c.code, message: c.message });
        const line = await waitForLine(logs, (l) => l["requestId"] === requestId);
        // README: a refusal of what the client sent is info, Connect's 501 for an unknown encoding included.
        assert.deepEqual([line["msg"], line["level"], line["code"]], ["request", "info", c.code]);
        assert.equal(logs.lines().filter((l) => l["requestId"] === requestId).length, 1, "no other line (no stack) for the request");
      });
    }
  }
});
