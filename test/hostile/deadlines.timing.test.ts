import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createMemoryPaymentIntentStore } from "../../src/store/memory/memory-payment-intent-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import { captureLogs, waitForLine, type CapturedLogs } from "../observability/support/capture-logs.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { connectOutcome, envelope, grpcOutcome, grpcWebOutcome, http1, http2Request, type RpcOutcome } from "./support/wire.js";

const listPath = "/payments.v2.PaymentIntentService/ListPaymentIntents";
const empty = envelope(0, new Uint8Array());

/** A store whose list() takes listDelayMs: a call that is still running when a short deadline passes. */
function slowListStore(): PaymentIntentStore & { listDelayMs: number } {
  const store = createMemoryPaymentIntentStore();
  const slow = {
    ...store,
    listDelayMs: 0,
    async list(query: Parameters<PaymentIntentStore["list"]>[0]) {
      await new Promise((resolve) => setTimeout(resolve, slow.listDelayMs));
      return store.list(query);
    },
  };
  return slow;
}

describe("RPC deadlines", () => {
  let server: TestServer;
  let store: ReturnType<typeof slowListStore>;
  let logs: CapturedLogs;
  let seq = 0;

  before(async () => {
    logs = captureLogs();
    store = slowListStore();
    server = await startTestServer({ logger: logs.logger, intents: store });
  });
  after(() => server.close());

  const grpc = (headers: Record<string, string>) =>
    http2Request(server.port, "POST", listPath, { "content-type": "application/grpc", te: "trailers", authorization: server.bearer(), ...headers }, empty).then(grpcOutcome);
  const grpcWeb = (headers: Record<string, string>) =>
    http1(server.port, "POST", listPath, { "content-type": "application/grpc-web+proto", authorization: server.bearer(), ...headers }, empty).then((r) => grpcWebOutcome(r));
  const connect = (headers: Record<string, string>) =>
    http1(server.port, "POST", listPath, { "content-type": "application/json", authorization: server.bearer(), ...headers }, "{}").then(connectOutcome);

  // Fails on e1d5b66: connect-node only aborted a signal the handlers never read, so the call ran on and answered OK.
  describe("a deadline that passes while the call waits", () => {
    const cases: { name: string; call: (requestId: string) => Promise<RpcOutcome>; status: number; label: string }[] = [
      { name: "gRPC, grpc-timeout: 1m", call: (id) => grpc({ "grpc-timeout": "1m", "x-request-id": id }), status: 200, label: "grpc" },
      { name: "gRPC, grpc-timeout: 50000u", call: (id) => grpc({ "grpc-timeout": "50000u", "x-request-id": id }), status: 200, label: "grpc" },
      { name: "gRPC-Web, grpc-timeout: 1m", call: (id) => grpcWeb({ "grpc-timeout": "1m", "x-request-id": id }), status: 200, label: "grpc-web" },
      { name: "Connect, connect-timeout-ms: 1", call: (id) => connect({ "connect-timeout-ms": "1", "x-request-id": id }), status: 504, label: "connect" },
    ];
    for (const c of cases) {
      it(`answers DeadlineExceeded over ${c.name}, and logs it`, async () => {
        store.listDelayMs = 1500;
        const requestId = `deadline-${++seq}`;
        const started = performance.now();
        const outcome = await c.call(requestId);
        const elapsed = performance.now() - started;
        assert.deepEqual(
          [outcome.status, outcome.code, outcome.message, outcome.messages],
          [c.status, "DeadlineExceeded", "the deadline passed before the call finished", []],
        );
        assert.ok(elapsed < 1200, `answered when the deadline passed, not when the store returned (${Math.round(elapsed)} ms)`);
        const line = await waitForLine(logs, (l) => l["msg"] === "request" && l["requestId"] === requestId);
        // README: a client's own deadline is not the service's fault: info, whatever the protocol's status.
        assert.deepEqual([line["level"], line["protocol"], line["code"]], ["info", c.label, "DeadlineExceeded"]);
      });
    }
  });

  // Fails on e1d5b66: a malformed timeout was ignored and the call served.
  describe("a malformed timeout", () => {
    for (const value of ["1", "1x", "S", "123456789S", "-1S", "1.5S", "0x10S", "1 S", "1s"]) {
      it(`refuses grpc-timeout ${JSON.stringify(value)} with InvalidArgument over gRPC and gRPC-Web`, async () => {
        store.listDelayMs = 0;
        for (const outcome of [await grpc({ "grpc-timeout": value }), await grpcWeb({ "grpc-timeout": value })]) {
          assert.deepEqual([outcome.code, outcome.message], ["InvalidArgument", "grpc-timeout is not a valid timeout"]);
        }
      });
    }
    for (const value of ["abc", "-1", "1.5", "12345678901", "0x10", "1e3"]) {
      it(`refuses connect-timeout-ms ${JSON.stringify(value)} with 400 InvalidArgument over Connect`, async () => {
        store.listDelayMs = 0;
        const outcome = await connect({ "connect-timeout-ms": value });
        assert.deepEqual([outcome.status, outcome.code, outcome.message], [400, "InvalidArgument", "connect-timeout-ms is not a valid timeout"]);
      });
    }
  });

  // Fails before the fix in this branch: a timeout past 2^31-1 ms overflowed Node's timer, which then fired after 1 ms.
  describe("a long deadline", () => {
    const cases: { name: string; call: () => Promise<RpcOutcome> }[] = [
      { name: "gRPC, grpc-timeout: 720H (30 days)", call: () => grpc({ "grpc-timeout": "720H" }) },
      { name: "gRPC, grpc-timeout: 99999999H (the largest)", call: () => grpc({ "grpc-timeout": "99999999H" }) },
      { name: "gRPC-Web, grpc-timeout: 99999999S", call: () => grpcWeb({ "grpc-timeout": "99999999S" }) },
      { name: "Connect, connect-timeout-ms: 9999999999", call: () => connect({ "connect-timeout-ms": "9999999999" }) },
      { name: "gRPC, grpc-timeout: 2147483S (just under 2^31 ms)", call: () => grpc({ "grpc-timeout": "2147483S" }) },
    ];
    for (const c of cases) {
      it(`lets the call finish over ${c.name}`, async () => {
        store.listDelayMs = 50;
        const outcome = await c.call();
        assert.deepEqual([outcome.code, outcome.message], ["OK", ""]);
      });
    }
  });
});
