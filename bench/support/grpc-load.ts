import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { CreatePaymentIntentRequestSchema } from "../../gen/payments/v2/payment_intent_pb.js";
import { summarize, type LoadResult } from "./load-result.js";

export interface GrpcCreateLoadOptions {
  /** http://host:port of the server (gRPC over cleartext HTTP/2, prior knowledge). */
  url: string;
  apiKey: string;
  /** Requests in flight at once, as streams of one HTTP/2 connection. */
  streams: number;
  durationSeconds: number;
  /** Prefix of every clientReference, so separate runs on one server never replay. */
  runId: string;
}

const path = "/payments.v2.PaymentIntentService/CreatePaymentIntent";

/** grpcFrame is one length-prefixed gRPC message (gRPC over HTTP/2, "Length-Prefixed-Message"). */
function grpcFrame(clientReference: string): Buffer {
  const message = toBinary(
    CreatePaymentIntentRequestSchema,
    create(CreatePaymentIntentRequestSchema, {
      amount: 50000n,
      customerEmail: "ada@example.com",
      clientReference,
      paymentMethod: ["card", "bank_transfer"],
      callbackUrl: "https://shop.example.com/paid",
    }),
  );
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

/**
 * runGrpcCreateLoad drives CreatePaymentIntent over gRPC (binary protobuf,
 * HTTP/2) with a fixed number of concurrent streams on one connection, each
 * request with its own clientReference. h2load cannot vary the body, and a
 * generated connect-node client would spend most of the load generator's core
 * on its own machinery, so this sends prebuilt frames with node:http2 directly.
 */
export async function runGrpcCreateLoad(options: GrpcCreateLoadOptions): Promise<LoadResult> {
  const session = http2.connect(options.url);
  session.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    session.once("connect", () => resolve());
    session.once("error", reject);
  });
  const headers = {
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc+proto",
    te: "trailers",
    authorization: `Bearer ${options.apiKey}`,
  };
  const latencies: number[] = [];
  let errors = 0;
  let notOk = 0;
  let counter = 0;
  const started = performance.now();
  const deadline = started + options.durationSeconds * 1000;

  const call = () =>
    new Promise<void>((resolve) => {
      const frame = grpcFrame(`${options.runId}-${++counter}`);
      const sent = performance.now();
      const stream = session.request(headers, { endStream: false });
      let grpcStatus: string | undefined;
      let settled = false;
      const finish = (failed: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (failed) errors++;
        else {
          latencies.push(performance.now() - sent);
          if (grpcStatus !== "0") notOk++;
        }
        resolve();
      };
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        finish(true);
      }, 10_000);
      stream.on("response", (h) => {
        // A trailers-only answer (an error) carries grpc-status in the headers.
        if (typeof h["grpc-status"] === "string") grpcStatus = h["grpc-status"];
      });
      stream.on("trailers", (t) => {
        if (typeof t["grpc-status"] === "string") grpcStatus = t["grpc-status"];
      });
      stream.on("data", () => {});
      stream.on("end", () => finish(false));
      stream.on("error", () => finish(true));
      stream.on("close", () => finish(grpcStatus === undefined));
      stream.end(frame);
    });

  const worker = async () => {
    while (performance.now() < deadline) await call();
  };
  await Promise.all(Array.from({ length: options.streams }, worker));
  const seconds = (performance.now() - started) / 1000;
  await new Promise<void>((resolve) => session.close(() => resolve()));
  return summarize(latencies, seconds, errors, notOk);
}
