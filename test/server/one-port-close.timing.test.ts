import assert from "node:assert/strict";
import http from "node:http";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { connectH2c, http1Request, http2Request } from "../support/keep-alive-requests.js";
import { startTestServer } from "../support/test-server.js";

// Timing tier (test:all): close() must not wait for idle connections' own
// timeouts, so this asserts it finishes within a second on a machine not
// overloaded by other work.

describe("ListeningServer.close", () => {
  it("resolves promptly with an idle keep-alive HTTP/1.1 connection and an idle h2 session open", async () => {
    const server = await startTestServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const session = await connectH2c(server.url);
    let closed = false;
    try {
      const headers = { authorization: server.bearer() };
      const one = await http1Request(`${server.restUrl}/v2/payment-intents`, { headers, agent });
      assert.equal(one.status, 200);
      const two = await http2Request(session, "/v1/v2/payment-intents", headers);
      assert.equal(two.status, 200);
      // Both connections are now idle and still open.
      assert.equal(one.socket.destroyed, false);
      assert.equal(session.closed, false);
      const http1Closed = new Promise<void>((resolve) => one.socket.once("close", () => resolve()));
      const sessionClosed = new Promise<void>((resolve) => session.once("close", () => resolve()));

      const started = performance.now();
      await server.close();
      closed = true;
      const took = performance.now() - started;
      assert.ok(took < 1000, `close() took ${Math.round(took)} ms`);

      const within = (promise: Promise<void>, what: string) =>
        Promise.race([promise, delay(1000).then(() => assert.fail(`${what} is still open`))]);
      await within(http1Closed, "the keep-alive HTTP/1.1 connection");
      await within(sessionClosed, "the h2 session");

      // The port is free: nothing answers any more.
      await assert.rejects(fetch(`${server.restUrl}/v2/payment-intents`, { headers }));
    } finally {
      agent.destroy();
      session.destroy();
      if (!closed) await server.close();
    }
  });
});
