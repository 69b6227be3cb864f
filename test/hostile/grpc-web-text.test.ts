import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CreatePaymentIntentRequestSchema, PaymentIntentSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import { ListSettlementAccountsResponseSchema } from "../../gen/payments/v2/settlement_account_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { envelope, grpcWebOutcome, http1, splitEnvelopes } from "./support/wire.js";

const createPath = "/payments.v2.PaymentIntentService/CreatePaymentIntent";
const listAccountsPath = "/payments.v2.SettlementAccountService/ListSettlementAccounts";

const createFrame = (reference: string) =>
  envelope(
    0,
    toBinary(CreatePaymentIntentRequestSchema, create(CreatePaymentIntentRequestSchema, { amount: 500n, customerEmail: "ada@example.com", clientReference: reference })),
  );

/** Base64 of bytes cut at the given offsets, each piece encoded (and padded) on its own, as a chunking client sends them. */
const piecewiseBase64 = (bytes: Buffer, cuts: number[]) =>
  [0, ...cuts, bytes.length]
    .slice(0, -1)
    .map((start, i) => bytes.subarray(start, [...cuts, bytes.length][i]).toString("base64"))
    .join("");

// Fails on e1d5b66: connect-node did not speak application/grpc-web-text (415).
describe("gRPC-Web text mode (application/grpc-web-text)", () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ store: "memory" });
  });
  after(() => server.close());

  const send = (path: string, body: string, contentType = "application/grpc-web-text") =>
    http1(server.port, "POST", path, { "content-type": contentType, "x-grpc-web": "1", authorization: server.bearer() }, body);

  it("answers a call in base64 frames under application/grpc-web-text+proto", async () => {
    const res = await send(listAccountsPath, envelope(0, new Uint8Array()).toString("base64"));
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "application/grpc-web-text+proto");
    assert.match(res.body.toString("latin1"), /^[A-Za-z0-9+/=]+$/, "the whole body is base64");
    const outcome = grpcWebOutcome(res, true);
    assert.deepEqual([outcome.code, outcome.message], ["OK", ""]);
    assert.equal(outcome.messages.length, 1);
    assert.deepEqual(fromBinary(ListSettlementAccountsResponseSchema, outcome.messages[0]!).settlementAccounts, []);
  });

  it("creates through text mode, the same intent binary gRPC-Web would", async () => {
    const outcome = grpcWebOutcome(await send(createPath, createFrame("text-1").toString("base64"), "application/grpc-web-text+proto"), true);
    assert.deepEqual([outcome.code, outcome.message], ["OK", ""]);
    const intent = fromBinary(PaymentIntentSchema, outcome.messages[0]!);
    assert.deepEqual([intent.clientReference, intent.amount, intent.status], ["text-1", 500n, "pending"]);
  });

  // Fails before the fix in this branch: Node's base64 decoder stops at the first "=", so the rest of the frame was lost.
  it("reads a body base64-encoded in separately padded pieces", async () => {
    const frame = createFrame("text-2");
    for (const cuts of [[5], [1], [4, 9], [2, 3, 7, 20]]) {
      const body = piecewiseBase64(frame, cuts);
      assert.ok(body.slice(0, -2).includes("="), `padding inside the body for cuts ${cuts}`);
      const outcome = grpcWebOutcome(await send(createPath, body), true);
      assert.deepEqual([outcome.code, outcome.message], ["OK", ""], `cuts ${cuts}`);
    }
  });

  it("reads base64 broken into lines", async () => {
    const text = createFrame("text-3").toString("base64");
    const outcome = grpcWebOutcome(await send(createPath, text.replace(/(.{16})/g, "$1\r\n")), true);
    assert.deepEqual([outcome.code, outcome.message], ["OK", ""]);
  });

  for (const [name, body] of [
    ["characters outside base64", "AAAA*AAA"],
    ["a group cut short", "AAAAAAA"],
    ["URL-safe base64", Buffer.from([0xfb, 0xff, 0, 0, 0]).toString("base64url")],
    ["padding in the middle of a group", "AA=A"],
  ] as const) {
    it(`refuses ${name} with InvalidArgument, never decoding around it`, async () => {
      const outcome = grpcWebOutcome(await send(listAccountsPath, body), true);
      assert.deepEqual([outcome.code, outcome.message], ["InvalidArgument", "the gRPC-Web text body is not valid base64"]);
    });
  }

  it("answers errors as a base64 trailer frame", async () => {
    const res = await send(createPath, envelope(0, Buffer.from([0x08])).toString("base64"));
    const frames = splitEnvelopes(Buffer.from(res.body.toString("latin1"), "base64"));
    assert.deepEqual(frames.map((f) => f.flags), [0x80], "one trailer frame, no message");
    assert.equal(frames[0]!.data.toString("latin1"), "grpc-status: 3\r\ngrpc-message: the request message is not valid protobuf\r\n");
  });
});
