import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { EventSchema, EventService } from "../../gen/payments/v2/events_pb.js";
import { createMemoryApiKeyVerifier } from "../../src/auth/memory-api-key-verifier.js";
import { createRequestContext } from "../../src/http/request-context.js";
import { createPipeline } from "../../src/pipeline/pipeline.js";
import type { Procedure } from "../../src/pipeline/procedure.js";
import { captureLogs } from "../observability/support/capture-logs.js";

const method = EventService.method.streamEvents;

/** A keyless StreamEvents whose stream yields one event, then throws failure. */
function failingStream(failure: unknown): Procedure {
  return {
    service: EventService,
    method,
    path: "/payments.v2.EventService/StreamEvents",
    requiresKey: false,
    async *stream() {
      yield create(EventSchema, { id: "evt_1" });
      throw failure;
    },
  };
}

async function drain(outputs: AsyncIterable<Message>): Promise<{ received: number; error: unknown }> {
  let received = 0;
  try {
    for await (const _ of outputs) received++;
  } catch (error) {
    return { received, error };
  }
  return { received, error: undefined };
}

// Issue 18 §3: an error raised while a stream runs goes through the pipeline's one mapping, as a unary error does.
describe("the pipeline's stream", () => {
  const run = async (failure: unknown) => {
    const logs = captureLogs();
    const pipeline = createPipeline({ verifier: createMemoryApiKeyVerifier([]), logger: logs.logger });
    const context = createRequestContext("stream-errors", "POST", "127.0.0.1");
    context.protocol = "grpc";
    const outputs = await pipeline.stream(context, failingStream(failure), { authorization: [], keyFirst: false }, (async function* () {})(), new AbortController().signal);
    return { ...(await drain(outputs)), logs };
  };

  it("maps an unexpected error raised mid-stream to Internal \"internal error\", logging the cause once", async () => {
    const { received, error, logs } = await run(new Error("store exploded at row 42"));
    assert.equal(received, 1);
    assert.ok(error instanceof ConnectError);
    assert.deepEqual([error.code, error.rawMessage], [Code.Internal, "internal error"]);
    const lines = logs.lines().filter((l) => l["msg"] === "unexpected error in RPC handler");
    assert.equal(lines.length, 1);
    assert.match(JSON.stringify(lines[0]!["err"]), /row 42/);
  });

  it("passes an expected ConnectError raised mid-stream through as it is, logging nothing", async () => {
    const { received, error, logs } = await run(new ConnectError("at most 10 event streams may be open per merchant", Code.ResourceExhausted));
    assert.equal(received, 1);
    assert.ok(error instanceof ConnectError);
    assert.deepEqual([error.code, error.rawMessage], [Code.ResourceExhausted, "at most 10 event streams may be open per merchant"]);
    assert.deepEqual(logs.lines(), []);
  });
});
