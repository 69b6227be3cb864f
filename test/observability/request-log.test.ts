import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createClient } from "@connectrpc/connect";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { createMemoryPaymentIntentStore } from "../../src/store/memory/memory-payment-intent-store.js";
import type { PaymentIntentStore } from "../../src/store/payment-intent-store.js";
import { expectConnectError, rpcProtocols } from "../rpc/support/rpc-helpers.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { captureLogs, waitForLine, type CapturedLogs } from "./support/capture-logs.js";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const procedure = (name: string) => `/payments.v2.PaymentIntentService/${name}`;

/** The RPC protocols by the label the request log gives them. */
const protocolLabels: Record<string, string> = {
  "Connect JSON over HTTP/1.1": "connect",
  "Connect binary over HTTP/2": "connect",
  "gRPC-Web over HTTP/1.1": "grpc-web",
  "gRPC over HTTP/2": "grpc",
};

/** A store whose list fails the way a broken database would: an internal error with a cause to log. */
function failingListStore(): PaymentIntentStore {
  const store = createMemoryPaymentIntentStore();
  return { ...store, list: async () => Promise.reject(new Error("relation does not exist")) };
}

describe("request logs", () => {
  let server: TestServer;
  let logs: CapturedLogs;
  let seq = 0;
  /** A sane request id no other case uses. */
  const newId = (prefix: string) => `${prefix}-${++seq}:test.id`;

  before(async () => {
    logs = captureLogs();
    server = await startTestServer({ logger: logs.logger, intents: failingListStore() });
  });
  after(() => server.close());

  const lineFor = (requestId: string) => waitForLine(logs, (line) => line["msg"] === "request" && line["requestId"] === requestId);

  it("echoes a REST request's X-Request-Id and logs one line with its route template, status, duration and merchant", async () => {
    const requestId = newId("rest");
    const res = await fetch(`${server.restUrl}/v2/payment-intents`, {
      method: "POST",
      headers: { authorization: server.bearer(), "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify({ amount: 100, customerEmail: "ada@example.com", clientReference: requestId }),
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("x-request-id"), requestId);
    const { id } = (await res.json()) as { id: string };

    const get = await fetch(`${server.restUrl}/v2/payment-intents/${id}`, {
      headers: { authorization: server.bearer("merchantB"), "x-request-id": `${requestId}-get` },
    });
    assert.equal(get.status, 404);

    const line = await lineFor(requestId);
    const { time, durationMs, pid, hostname, ...rest } = line;
    assert.match(String(time), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(typeof durationMs, "number");
    assert.ok((durationMs as number) >= 0);
    assert.equal(typeof pid, "number");
    assert.equal(typeof hostname, "string");
    assert.deepEqual(rest, {
      level: "info",
      msg: "request",
      requestId,
      protocol: "rest",
      method: "POST",
      route: "/v2/payment-intents",
      status: 201,
      merchantId: "merchantA",
    });
    const getLine = await lineFor(`${requestId}-get`);
    assert.equal(getLine["route"], "/v2/payment-intents/{id}");
    assert.equal(getLine["status"], 404);
    assert.equal(getLine["merchantId"], "merchantB");
    assert.ok(!logs.text().includes(id), "the intent id in the path is not logged: the route template is");
  });

  it("logs no merchant for a request without a valid key", async () => {
    const requestId = newId("nokey");
    const res = await fetch(`${server.restUrl}/v2/payment-intents`, { headers: { authorization: "Bearer nope-nope-nope-nope", "x-request-id": requestId } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("x-request-id"), requestId);
    const line = await lineFor(requestId);
    assert.equal(line["status"], 401);
    assert.ok(!("merchantId" in line), JSON.stringify(line));
  });

  it("generates a request id when there is none, or when the one sent is not sane", async () => {
    const insane = ["", "has space", "a".repeat(129), "semi;colon", "new\\nline", "ünïcode"];
    const sent: (string | undefined)[] = [undefined, ...insane];
    for (const header of sent) {
      const headers: Record<string, string> = { authorization: server.bearer() };
      if (header !== undefined) headers["x-request-id"] = header;
      const res = await fetch(`${server.restUrl}/v2/settlement-accounts`, { headers });
      assert.equal(res.status, 200);
      const echoed = res.headers.get("x-request-id") ?? "";
      assert.match(echoed, uuidPattern, `sent ${JSON.stringify(header)}`);
      assert.notEqual(echoed, header);
      const line = await lineFor(echoed);
      assert.equal(line["route"], "/v2/settlement-accounts");
    }
    // At the limits of sane: kept as sent.
    for (const header of ["a", "A".repeat(128), "Az09._:-"]) {
      const res = await fetch(`${server.restUrl}/v2/settlement-accounts`, { headers: { authorization: server.bearer(), "x-request-id": header } });
      assert.equal(res.headers.get("x-request-id"), header);
    }
  });

  it("labels an unknown path as unmatched, and logs its path without the query", async () => {
    const requestId = newId("unmatched");
    const res = await fetch(`${server.url}/nowhere/at/all?email=ada@example.com`, { headers: { "x-request-id": requestId } });
    assert.equal(res.status, 404);
    const line = await lineFor(requestId);
    assert.equal(line["route"], "(unmatched)");
    assert.equal(line["path"], "/nowhere/at/all");
    assert.equal(line["protocol"], "rest");
  });

  it("carries the request id in the error line of an unexpected failure, and logs the 500 at error level", async () => {
    const requestId = newId("boom");
    const res = await fetch(`${server.restUrl}/v2/payment-intents`, { headers: { authorization: server.bearer(), "x-request-id": requestId } });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("x-request-id"), requestId);
    const errorLine = await waitForLine(logs, (line) => line["msg"] === "unexpected error in REST request" && line["requestId"] === requestId);
    assert.equal(errorLine["level"], "error");
    const line = await lineFor(requestId);
    assert.equal(line["level"], "error");
    assert.equal(line["status"], 500);
  });

  for (const protocol of rpcProtocols) {
    describe(`over ${protocol.name}`, () => {
      const label = protocolLabels[protocol.name]!;

      it("echoes X-Request-Id as a response header and logs the procedure, HTTP status and code OK", async () => {
        const requestId = newId(label);
        const client = createClient(PaymentIntentService, protocol.transport(server.url, []));
        let echoed: string | null = null;
        const created = await client.createPaymentIntent(
          { amount: 100n, customerEmail: "ada@example.com", clientReference: requestId },
          { headers: { authorization: server.bearer(), "x-request-id": requestId }, onHeader: (h) => void (echoed = h.get("x-request-id")) },
        );
        assert.ok(created.id);
        assert.equal(echoed, requestId);
        const { time: _t, durationMs, pid: _p, hostname: _h, ...rest } = await lineFor(requestId);
        assert.equal(typeof durationMs, "number");
        assert.deepEqual(rest, {
          level: "info",
          msg: "request",
          requestId,
          protocol: label,
          method: "POST",
          route: procedure("CreatePaymentIntent"),
          status: 200,
          code: "OK",
          merchantId: "merchantA",
        });
      });

      it("logs the Code of a failed call, and echoes the id on the error", async () => {
        const requestId = newId(`${label}-notfound`);
        const client = createClient(PaymentIntentService, protocol.transport(server.url, []));
        const error = await expectConnectError(
          client.getPaymentIntent({ id: "pi_missing" }, { headers: { authorization: server.bearer(), "x-request-id": requestId } }),
          Code.NotFound,
        );
        assert.equal(error.metadata.get("x-request-id"), requestId);
        const line = await lineFor(requestId);
        assert.equal(line["code"], "NotFound");
        assert.equal(line["status"], label === "connect" ? 404 : 200);
        assert.equal(line["route"], procedure("GetPaymentIntent"));
      });

      it("logs the Code of a call refused before the handler: no key (interceptor), too large (decoder)", async () => {
        const requestId = newId(`${label}-nokey`);
        const client = createClient(PaymentIntentService, protocol.transport(server.url, []));
        await expectConnectError(client.listPaymentIntents({}, { headers: { "x-request-id": requestId } }), Code.Unauthenticated);
        const line = await lineFor(requestId);
        assert.equal(line["code"], "Unauthenticated");
        assert.ok(!("merchantId" in line));

        const tooLarge = newId(`${label}-large`);
        await expectConnectError(
          client.createPaymentIntent(
            { amount: 100n, customerEmail: "x".repeat(70 * 1024), clientReference: tooLarge },
            { headers: { authorization: server.bearer(), "x-request-id": tooLarge } },
          ),
          Code.ResourceExhausted,
        );
        assert.equal((await lineFor(tooLarge))["code"], "ResourceExhausted");
      });

      it("carries the request id in the error line of an unexpected failure", async () => {
        const client = createClient(PaymentIntentService, protocol.transport(server.url, []));

        const internal = newId(`${label}-internal`);
        await expectConnectError(
          client.listPaymentIntents({}, { headers: { authorization: server.bearer(), "x-request-id": internal } }),
          Code.Internal,
        );
        const errorLine = await waitForLine(logs, (l) => l["msg"] === "unexpected error in RPC handler" && l["requestId"] === internal);
        assert.equal(errorLine["level"], "error");
        assert.equal((await lineFor(internal))["code"], "Internal");
      });
    });
  }

  it("logs InvalidArgument for a Connect body that does not decode (before any interceptor runs)", async () => {
    const requestId = newId("connect-bad-body");
    const res = await fetch(`${server.url}${procedure("ListPaymentIntents")}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: server.bearer(), "x-request-id": requestId },
      body: "{not json",
    });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("x-request-id"), requestId);
    const line = await lineFor(requestId);
    assert.equal(line["protocol"], "connect");
    assert.equal(line["code"], "InvalidArgument");
  });
});

describe("request logs of plain HTTP routes", () => {
  let server: TestServer;
  let logs: CapturedLogs;
  before(async () => {
    logs = captureLogs();
    server = await startTestServer({
      logger: logs.logger,
      httpRoutes: [
        { name: "/boom/{token}", matches: (path) => path.startsWith("/boom/"), handle: () => Promise.reject(new Error("page failed")) },
        { matches: (path) => path === "/anonymous", handle: (_req, res) => void (res.writeHead(204), res.end("")) },
      ],
    });
  });
  after(() => server.close());

  it("label the route by its name, never its path, and carry the request id into the error line", async () => {
    const res = await fetch(`${server.url}/boom/secret-token-123`, { headers: { "x-request-id": "http-route-1" } });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("x-request-id"), "http-route-1");
    const error = await waitForLine(logs, (line) => line["msg"] === "unexpected error in HTTP route");
    assert.equal(error["requestId"], "http-route-1");
    const line = await waitForLine(logs, (l) => l["msg"] === "request" && l["requestId"] === "http-route-1");
    assert.deepEqual([line["protocol"], line["route"], line["status"], line["level"]], ["http", "/boom/{token}", 500, "error"]);
    assert.ok(!("path" in line));
    assert.equal(error["route"], "/boom/{token}");
    assert.ok(!JSON.stringify(logs.lines()).includes("secret-token-123"), "a path secret reached the logs");

    await fetch(`${server.url}/anonymous`, { headers: { "x-request-id": "http-route-2" } });
    const anonymous = await waitForLine(logs, (l) => l["msg"] === "request" && l["requestId"] === "http-route-2");
    assert.equal(anonymous["route"], "(unnamed)");
  });
});
