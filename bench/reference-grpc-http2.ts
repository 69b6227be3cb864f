/**
 * Reference: the floor of a unary gRPC call in one Node process. A raw
 * node:http2 server (cleartext, prior knowledge) that reads the request's
 * 5-byte envelope by hand, decodes CreatePaymentIntentRequest with
 * protobuf-es fromBinary, checks the bearer key, stores the intent in a Map
 * and answers a PaymentIntent with toBinary and grpc-status trailers. No
 * framework, no validation beyond the envelope, no deadlines, no compression.
 * `npm run bench` starts it as a process of its own and drives it exactly as
 * it drives the service's gRPC create.
 */
import { randomUUID } from "node:crypto";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  CreatePaymentIntentRequestSchema,
  PaymentIntentSchema,
  PaymentMethodSchema,
  type PaymentIntent,
} from "../gen/payments/v2/payment_intent_pb.js";

const path = "/payments.v2.PaymentIntentService/CreatePaymentIntent";
/** API_KEYS as the service reads it: merchant:key,… */
const merchantByKey = new Map(
  (process.env.API_KEYS ?? "").split(",").flatMap((entry) => {
    const at = entry.indexOf(":");
    return at > 0 ? [[`Bearer ${entry.slice(at + 1)}` as string, entry.slice(0, at)] as const] : [];
  }),
);
const intents = new Map<string, PaymentIntent>();

/** trailersOnly answers an error as gRPC does: HTTP 200, grpc-status in the only headers frame. */
function trailersOnly(stream: http2.ServerHttp2Stream, code: number, message: string): void {
  stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": String(code), "grpc-message": message }, { endStream: true });
}

const server = http2.createServer();
server.on("stream", (stream, headers) => {
  if (headers[":method"] !== "POST" || headers[":path"] !== path) {
    trailersOnly(stream, 12, "unimplemented");
    return;
  }
  const merchantId = merchantByKey.get(String(headers["authorization"]));
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  stream.on("end", () => {
    if (merchantId === undefined) {
      trailersOnly(stream, 16, "unauthenticated");
      return;
    }
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5) {
      trailersOnly(stream, 3, "one uncompressed message expected");
      return;
    }
    let request;
    try {
      request = fromBinary(CreatePaymentIntentRequestSchema, body.subarray(5));
    } catch {
      trailersOnly(stream, 3, "malformed message");
      return;
    }
    const now = timestampFromDate(new Date());
    const intent = create(PaymentIntentSchema, {
      id: `pi_${randomUUID()}`,
      amount: request.amount,
      totalAmount: request.amount,
      currency: "NGN",
      receiptEmail: request.receiptEmail || request.customerEmail,
      customerEmail: request.customerEmail,
      country: "NG",
      status: "pending",
      clientReference: request.clientReference,
      paymentMethods: request.paymentMethod.map((type) => create(PaymentMethodSchema, { id: `pm_${type}`, type })),
      callbackUrl: request.callbackUrl,
      createdAt: now,
      updatedAt: now,
    });
    intents.set(`${merchantId}/${request.clientReference}`, intent);
    const message = toBinary(PaymentIntentSchema, intent);
    const frame = Buffer.allocUnsafe(5 + message.length);
    frame.writeUInt8(0, 0);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame);
  });
});

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  const { address, port } = server.address() as AddressInfo;
  process.stderr.write(`${JSON.stringify({ msg: "reference listening", url: `http://${address}:${port}` })}\n`);
});
// At once: the load generator keeps its HTTP/2 sessions open, which server.close() would wait for.
process.on("SIGTERM", () => process.exit(0));
