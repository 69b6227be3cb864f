import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { Code, createClient } from "@connectrpc/connect";
import { Health } from "../../gen/health/v1/health_pb.js";
import { StreamEventsRequestSchema } from "../../gen/payments/v2/events_pb.js";
import { ListPaymentIntentsRequestSchema, ListPaymentIntentsResponseSchema, PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import {
  connectOutcome,
  envelope,
  grpcOutcome,
  grpcWebOutcome,
  http1,
  http2Request,
  splitEnvelopes,
  type RpcOutcome,
  type WireResponse,
} from "../hostile/support/wire.js";
import { expectConnectError, rpcProtocols } from "./support/rpc-helpers.js";

// Issue 22 §3: the protocol behaviour a conformance suite checks, on the
// wire (a client library would apply its own deadline, frame its own
// messages and half-close for us) and with @grpc/grpc-js where it can
// produce the case.

const listPath = "/payments.v2.PaymentIntentService/ListPaymentIntents";
const createPath = "/payments.v2.PaymentIntentService/CreatePaymentIntent";
const streamPath = "/payments.v2.EventService/StreamEvents";
const reflectionPath = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
const emptyList = Buffer.from(toBinary(ListPaymentIntentsRequestSchema, create(ListPaymentIntentsRequestSchema)));
const streamRequest = Buffer.from(toBinary(StreamEventsRequestSchema, create(StreamEventsRequestSchema)));

/** A Connect streaming answer: the end-of-stream frame's error, or OK. */
function connectStreamOutcome(response: WireResponse): RpcOutcome {
  const frames = splitEnvelopes(response.body);
  const end = frames.at(-1);
  if (!end || !(end.flags & 0x02)) throw new Error(`no end-of-stream frame in ${JSON.stringify(response.body.toString("latin1"))}`);
  const json = JSON.parse(end.data.toString("utf8")) as { error?: { code: string; message?: string } };
  const code = json.error ? json.error.code.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase()) : "OK";
  return { status: response.status, code, message: json.error?.message ?? "", messages: frames.slice(0, -1).map((f) => f.data), response };
}

/** openHttp1Call sends a chunked HTTP/1.1 body that never ends, and reads the whole answer. */
function openHttp1Call(port: number, path: string, headers: Record<string, string>, body: Buffer): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: "POST", path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, trailers: {}, body: Buffer.concat(chunks) });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.write(body);
  });
}

/** within fails the test when call has not settled after ms: the answer must come at the deadline, not at a listener timeout. */
async function within<T>(ms: number, what: string, call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("RPC protocol conformance (issue 22 §3)", () => {
  let server: TestServer;

  before(async () => {
    // Listener timeouts far beyond the deadlines: only the deadline may end these calls.
    server = await startTestServer({
      limits: { requestTimeoutMs: 60_000 },
      // Room for the 60 concurrent streams of one merchant.
      caps: { streamPollIntervalMs: 50, maxStreamsPerMerchant: 100 },
    });
  });
  after(() => server.close());

  const grpcHeaders = (extra: Record<string, string> = {}) => ({ "content-type": "application/grpc", te: "trailers", authorization: server.bearer(), ...extra });
  const grpcWebHeaders = (extra: Record<string, string> = {}) => ({ "content-type": "application/grpc-web+proto", "x-grpc-web": "1", authorization: server.bearer(), ...extra });

  describe("a StreamEvents stream that reaches its deadline", () => {
    const count = 60;
    const timeouts = Array.from({ length: count }, (_, i) => 50 + ((i * 37) % 151));
    const protocols: { name: string; call: (timeoutMs: number) => Promise<RpcOutcome> }[] = [
      {
        name: "gRPC",
        call: (ms) => http2Request(server.port, "POST", streamPath, grpcHeaders({ "grpc-timeout": `${ms}m` }), envelope(0, streamRequest)).then(grpcOutcome),
      },
      {
        name: "gRPC-Web",
        call: (ms) => http1(server.port, "POST", streamPath, grpcWebHeaders({ "grpc-timeout": `${ms}m` }), envelope(0, streamRequest)).then((r) => grpcWebOutcome(r)),
      },
      {
        name: "Connect",
        call: (ms) =>
          http1(
            server.port,
            "POST",
            streamPath,
            { "content-type": "application/connect+proto", "connect-protocol-version": "1", "connect-timeout-ms": String(ms), authorization: server.bearer() },
            envelope(0, streamRequest),
          ).then(connectStreamOutcome),
      },
    ];
    for (const protocol of protocols) {
      it(`ends DeadlineExceeded, never OK, over ${protocol.name} (${count} streams, 50–200 ms deadlines)`, async () => {
        const outcomes = await Promise.all(timeouts.map((ms) => protocol.call(ms)));
        const codes = new Map<string, number>();
        for (const outcome of outcomes) codes.set(outcome.code, (codes.get(outcome.code) ?? 0) + 1);
        assert.deepEqual(Object.fromEntries(codes), { DeadlineExceeded: count });
      });
    }
  });

  describe("a deadline while the request side stays open", () => {
    it("ends a bidi stream (reflection) over gRPC that never half-closes", async () => {
      const outcome = grpcOutcome(await within(5000, "reflection", http2Request(server.port, "POST", reflectionPath, grpcHeaders({ "grpc-timeout": "200m" }), Buffer.alloc(0), { leaveOpen: true })));
      assert.deepEqual([outcome.code, outcome.message], ["DeadlineExceeded", "the deadline passed before the call finished"]);
    });

    it("ends a server stream over gRPC whose one message is never followed by a half-close", async () => {
      const outcome = grpcOutcome(await within(5000, "StreamEvents", http2Request(server.port, "POST", streamPath, grpcHeaders({ "grpc-timeout": "200m" }), envelope(0, streamRequest), { leaveOpen: true })));
      assert.equal(outcome.code, "DeadlineExceeded");
    });

    it("ends a server stream over Connect (HTTP/2) that never half-closes", async () => {
      const headers = { "content-type": "application/connect+proto", "connect-timeout-ms": "200", authorization: server.bearer() };
      const outcome = connectStreamOutcome(await within(5000, "StreamEvents", http2Request(server.port, "POST", streamPath, headers, envelope(0, streamRequest), { leaveOpen: true })));
      assert.equal(outcome.code, "DeadlineExceeded");
    });

    it("ends a unary call over gRPC whose body never half-closes", async () => {
      const outcome = grpcOutcome(await within(5000, "List", http2Request(server.port, "POST", listPath, grpcHeaders({ "grpc-timeout": "200m" }), envelope(0, emptyList), { leaveOpen: true })));
      assert.equal(outcome.code, "DeadlineExceeded");
    });

    it("ends a unary call over Connect (HTTP/2) whose body never ends: 504 deadline_exceeded", async () => {
      const headers = { "content-type": "application/proto", "connect-timeout-ms": "200", authorization: server.bearer() };
      const outcome = connectOutcome(await within(5000, "List", http2Request(server.port, "POST", listPath, headers, Buffer.from(emptyList), { leaveOpen: true })));
      assert.deepEqual([outcome.status, outcome.code], [504, "DeadlineExceeded"]);
    });

    it("ends a unary call over gRPC-Web (HTTP/1.1) whose chunked body never ends", async () => {
      const outcome = grpcWebOutcome(await within(5000, "List", openHttp1Call(server.port, listPath, grpcWebHeaders({ "grpc-timeout": "200m" }), envelope(0, emptyList))));
      assert.equal(outcome.code, "DeadlineExceeded");
    });
  });

  describe("unknown fields in JSON", () => {
    const body = Buffer.from(JSON.stringify({ amount: 700, customerEmail: "ada@example.com", clientReference: "", newerField: { x: 1 } }));
    const json = (reference: string) => Buffer.from(body.toString().replace('"clientReference":""', `"clientReference":"${reference}"`));
    it("are ignored over gRPC+json", async () => {
      const outcome = grpcOutcome(await http2Request(server.port, "POST", createPath, grpcHeaders({ "content-type": "application/grpc+json" }), envelope(0, json("unknown-grpc-json"))));
      assert.equal(outcome.code, "OK", outcome.message);
      assert.equal((JSON.parse(outcome.messages[0]!.toString()) as { clientReference: string }).clientReference, "unknown-grpc-json");
    });

    it("are ignored over gRPC-Web+json", async () => {
      const outcome = grpcWebOutcome(await http1(server.port, "POST", createPath, grpcWebHeaders({ "content-type": "application/grpc-web+json" }), envelope(0, json("unknown-grpc-web-json"))));
      assert.equal(outcome.code, "OK", outcome.message);
      assert.equal((JSON.parse(outcome.messages[0]!.toString()) as { clientReference: string }).clientReference, "unknown-grpc-web-json");
    });
  });

  describe("an unknown method", () => {
    for (const path of ["/payments.v2.PaymentIntentService/NoSuchMethod", "/payments.v9.NoSuchService/Call"]) {
      it(`answers ${path} over gRPC with grpc-status 12 and a message, HTTP 200`, async () => {
        const outcome = grpcOutcome(await http2Request(server.port, "POST", path, grpcHeaders(), envelope(0, emptyList)));
        assert.deepEqual([outcome.status, outcome.code, outcome.message], [200, "Unimplemented", `${path} is not a method of this service`]);
      });

      it(`answers ${path} over gRPC-Web with grpc-status 12 in the trailer frame, HTTP 200`, async () => {
        const outcome = grpcWebOutcome(await http1(server.port, "POST", path, grpcWebHeaders(), envelope(0, emptyList)));
        assert.deepEqual([outcome.status, outcome.code, outcome.message], [200, "Unimplemented", `${path} is not a method of this service`]);
      });

      it(`answers ${path} over Connect with 404 and its unimplemented error body`, async () => {
        for (const contentType of ["application/json", "application/proto"]) {
          const res = await http1(server.port, "POST", path, { "content-type": contentType, authorization: server.bearer() }, contentType === "application/json" ? "{}" : emptyList);
          assert.equal(res.status, 404);
          assert.equal(res.headers["content-type"], "application/json");
          assert.deepEqual(JSON.parse(res.body.toString()), { code: "unimplemented", message: `${path} is not a method of this service` });
        }
      });
    }

    it("answers grpc-js with UNIMPLEMENTED", async () => {
      const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
      try {
        const error = await new Promise<grpc.ServiceError | null>((resolve) => {
          client.makeUnaryRequest("/payments.v2.PaymentIntentService/NoSuchMethod", (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), (e) => resolve(e));
        });
        assert.equal(error?.code, grpc.status.UNIMPLEMENTED);
        assert.equal(error?.details, "/payments.v2.PaymentIntentService/NoSuchMethod is not a method of this service");
      } finally {
        client.close();
      }
    });

    // A service this server does not serve (Health's shape under another name): each of connect-node's transports must read Unimplemented.
    const unknownService = { ...Health, typeName: "payments.v2.NoSuchService" } as typeof Health;
    const check = { ...Health.method.check, parent: unknownService };
    Object.assign(unknownService, { method: { check }, methods: [check] });
    for (const protocol of rpcProtocols) {
      it(`answers connect-node over ${protocol.name} with Unimplemented`, async () => {
        const client = createClient(unknownService, protocol.transport(server.url, []));
        await expectConnectError(client.check({}), Code.Unimplemented, "/payments.v2.NoSuchService/Check is not a method of this service");
      });
    }

    it("still answers a REST path the REST 404", async () => {
      const res = await http1(server.port, "POST", "/v1/v2/no-such-route", { "content-type": "application/json" }, "{}");
      assert.deepEqual([res.status, JSON.parse(res.body.toString())], [404, { status: 404, title: "Not Found", message: "no route for /v1/v2/no-such-route" }]);
    });
  });

  describe("message counts", () => {
    for (const [name, body, message] of [
      ["no request message", Buffer.alloc(0), "the request carries no message"],
      ["two request messages", Buffer.concat([envelope(0, streamRequest), envelope(0, streamRequest)]), "the method takes exactly one request message"],
    ] as const) {
      it(`answers a server stream with ${name} over gRPC with Unimplemented`, async () => {
        const outcome = grpcOutcome(await http2Request(server.port, "POST", streamPath, grpcHeaders({ "grpc-timeout": "5S" }), body));
        assert.deepEqual([outcome.code, outcome.message], ["Unimplemented", message]);
      });

      it(`answers a server stream with ${name} over Connect with unimplemented`, async () => {
        const frames = Buffer.concat([body.length === 0 ? Buffer.alloc(0) : body]);
        const headers = { "content-type": "application/connect+proto", "connect-timeout-ms": "5000", authorization: server.bearer() };
        const outcome = connectStreamOutcome(await http1(server.port, "POST", streamPath, headers, frames));
        assert.deepEqual([outcome.code, outcome.message], ["Unimplemented", message]);
      });
    }
  });

  describe("compression", () => {
    it("answers an unsupported grpc-encoding over gRPC with Unimplemented and grpc-accept-encoding", async () => {
      const outcome = grpcOutcome(await http2Request(server.port, "POST", listPath, grpcHeaders({ "grpc-encoding": "br" }), envelope(1, emptyList)));
      assert.deepEqual([outcome.code, outcome.message], ["Unimplemented", "compression br is not supported; use gzip or identity"]);
      assert.equal(outcome.response.headers["grpc-accept-encoding"], "gzip,identity");
    });

    it("answers an unsupported grpc-encoding over gRPC-Web with Unimplemented and grpc-accept-encoding", async () => {
      const outcome = grpcWebOutcome(await http1(server.port, "POST", listPath, grpcWebHeaders({ "grpc-encoding": "snappy" }), envelope(0, emptyList)));
      assert.deepEqual([outcome.code, outcome.message], ["Unimplemented", "compression snappy is not supported; use gzip or identity"]);
      assert.equal(outcome.response.headers["grpc-accept-encoding"], "gzip,identity");
    });

    it("answers an unsupported Content-Encoding over Connect with 501 unimplemented and Accept-Encoding", async () => {
      const res = await http1(server.port, "POST", listPath, { "content-type": "application/proto", "content-encoding": "br", authorization: server.bearer() }, emptyList);
      const outcome = connectOutcome(res);
      assert.deepEqual([outcome.status, outcome.code], [501, "Unimplemented"]);
      assert.equal(res.headers["accept-encoding"], "gzip,identity");
    });

    it("answers an unsupported Connect-Content-Encoding on a stream with unimplemented and Connect-Accept-Encoding", async () => {
      const headers = { "content-type": "application/connect+proto", "connect-content-encoding": "br", authorization: server.bearer() };
      const res = await http1(server.port, "POST", streamPath, headers, envelope(0, streamRequest));
      assert.equal(connectStreamOutcome(res).code, "Unimplemented");
      assert.equal(res.headers["connect-accept-encoding"], "gzip,identity");
    });

    it("reads gzip from grpc-js (grpc.default_compression_algorithm)", async () => {
      const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), { "grpc.default_compression_algorithm": grpc.compressionAlgorithms.gzip });
      try {
        const metadata = new grpc.Metadata();
        metadata.set("authorization", server.bearer());
        const list = await new Promise((resolve, reject) => {
          client.makeUnaryRequest(
            listPath,
            (m: Buffer) => m,
            (b: Buffer) => fromBinary(ListPaymentIntentsResponseSchema, b),
            Buffer.from(toBinary(ListPaymentIntentsRequestSchema, create(ListPaymentIntentsRequestSchema, { pageSize: 5 }))),
            metadata,
            (e, r) => (e ? reject(e) : resolve(r)),
          );
        });
        assert.ok(list);
      } finally {
        client.close();
      }
    });

    it("reads a gzip-compressed frame over gRPC and gRPC-Web", async () => {
      const frame = envelope(1, gzipSync(emptyList));
      const viaGrpc = grpcOutcome(await http2Request(server.port, "POST", listPath, grpcHeaders({ "grpc-encoding": "gzip" }), frame));
      const viaWeb = grpcWebOutcome(await http1(server.port, "POST", listPath, grpcWebHeaders({ "grpc-encoding": "gzip" }), frame));
      assert.deepEqual([viaGrpc.code, viaWeb.code], ["OK", "OK"]);
    });
  });
});
