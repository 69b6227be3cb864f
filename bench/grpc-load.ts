/**
 * The gRPC load generator: CreatePaymentIntent over gRPC (binary protobuf,
 * cleartext HTTP/2 with prior knowledge) from a fixed number of concurrent
 * streams spread over a few connections, each request with its own
 * clientReference, so every one is a real create and never a replay.
 *
 * A process of its own, driven by `npm run bench` through stdin (see
 * support/command-child.ts), so the bench can read the CPU it uses from /proc
 * and the bench's own event loop never slows it. h2load would be lighter but
 * sends one body for every request (a replay after the first); a generated
 * connect-node client would spend most of its core on its own machinery. So
 * this writes the frames itself with node:http2: one request message is
 * encoded per phase and only its counter digits change per request.
 *
 * Reads URL and API_KEY; answers {run: {runId, seconds, streams, connections}}
 * with a LoadResult whose outcomes count "grpc-status N" per answer.
 */
import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { CreatePaymentIntentRequestSchema } from "../gen/payments/v2/payment_intent_pb.js";
import { serveCommands } from "./support/command-child.js";
import { summarize, type LoadResult } from "./support/load-result.js";

const url = process.env.URL!;
const apiKey = process.env.API_KEY!;
const path = "/payments.v2.PaymentIntentService/CreatePaymentIntent";
const digits = 10;

interface RunCommand {
  run: { runId: string; seconds: number; streams: number; connections: number };
}

/**
 * frameTemplate is one length-prefixed gRPC message ("Length-Prefixed-Message"
 * of the gRPC over HTTP/2 spec) whose clientReference ends in `digits` zeros,
 * and where in the frame those digits are.
 */
function frameTemplate(runId: string): { frame: Buffer; digitsAt: number } {
  const reference = `${runId}-${"0".repeat(digits)}`;
  const message = toBinary(
    CreatePaymentIntentRequestSchema,
    create(CreatePaymentIntentRequestSchema, {
      amount: 50000n,
      customerEmail: "ada@example.com",
      clientReference: reference,
      paymentMethod: ["card", "bank_transfer"],
      callbackUrl: "https://shop.example.com/paid",
    }),
  );
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const at = frame.indexOf(reference, 5, "latin1");
  if (at < 0) throw new Error("clientReference not found in the encoded request");
  return { frame, digitsAt: at + reference.length - digits };
}

function connect(): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.once("connect", () => {
      session.on("error", () => {});
      resolve(session);
    });
    session.once("error", reject);
  });
}

let sessions: http2.ClientHttp2Session[] = [];

async function run({ runId, seconds, streams, connections }: RunCommand["run"]): Promise<LoadResult> {
  // A server may close idle sessions between rounds (its HTTP/2 session timeout): open new ones.
  sessions = sessions.filter((s) => !s.closed && !s.destroyed);
  while (sessions.length < connections) sessions.push(await connect());
  const { frame: template, digitsAt } = frameTemplate(runId);
  const headers = {
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc",
    te: "trailers",
    authorization: `Bearer ${apiKey}`,
  };
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  let errors = 0;
  let counter = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;

  const call = (session: http2.ClientHttp2Session) =>
    new Promise<void>((resolve) => {
      const frame = Buffer.from(template);
      frame.write(String(++counter).padStart(digits, "0"), digitsAt, "latin1");
      const sent = performance.now();
      const stream = session.request(headers);
      let status: string | undefined;
      let settled = false;
      const finish = (failed: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (failed) errors++;
        else {
          latencies.push(performance.now() - sent);
          const outcome = `grpc-status ${status}`;
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        }
        resolve();
      };
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        finish(true);
      }, 10_000);
      stream.on("response", (h) => {
        // A trailers-only answer (an error) carries grpc-status in the headers.
        if (h[":status"] !== 200) status = `none (HTTP ${h[":status"]})`;
        else if (typeof h["grpc-status"] === "string") status = h["grpc-status"];
      });
      stream.on("trailers", (t) => {
        if (typeof t["grpc-status"] === "string") status = t["grpc-status"];
      });
      stream.on("data", () => {});
      stream.on("end", () => finish(status === undefined));
      stream.on("error", () => finish(true));
      stream.on("close", () => finish(status === undefined));
      stream.end(frame);
    });

  const worker = async (i: number) => {
    const session = sessions[i % connections]!;
    while (performance.now() < deadline) await call(session);
  };
  await Promise.all(Array.from({ length: streams }, (_, i) => worker(i)));
  return summarize(latencies, (performance.now() - started) / 1000, errors, outcomes);
}

await serveCommands<RunCommand>(
  async () => {},
  (command) => run(command.run),
  async () => {
    for (const session of sessions) session.close();
    sessions = [];
  },
);
