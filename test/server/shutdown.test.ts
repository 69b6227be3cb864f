import assert from "node:assert/strict";
import http2 from "node:http2";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { refused, startHarness } from "../support/shutdown-harness.js";

describe("graceful shutdown", () => {
  it("lets an HTTP/1.1 request in flight finish, refuses new connections, then closes the stores and exits 0", async () => {
    const { server, held, events, shutdown } = await startHarness();
    const response = fetch(`${server.url}/held`).then(async (res) => ({ status: res.status, text: await res.text() }));
    await held.arrived;

    const stopped = shutdown("SIGTERM");
    await delay(50);
    assert.equal(await refused(server.port), true, "a new connection was accepted during shutdown");
    assert.deepEqual(events, [], "stopped before the request in flight finished");

    held.release();
    assert.deepEqual(await response, { status: 200, text: "finished" });
    await stopped;
    assert.deepEqual(events, ["stores closed", "exit 0"]);
  });

  it("lets an HTTP/2 stream in flight finish after sending GOAWAY", async () => {
    const { server, held, events, shutdown } = await startHarness();
    const session = http2.connect(server.url);
    session.on("error", () => {});
    const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve()));
    const stream = session.request({ ":path": "/held" });
    const body = new Promise<{ status: number; text: string }>((resolve, reject) => {
      let status = 0;
      let text = "";
      stream.on("response", (headers) => (status = Number(headers[":status"])));
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (text += chunk));
      stream.on("end", () => resolve({ status, text }));
      stream.on("error", reject);
    });
    await held.arrived;

    const stopped = shutdown("SIGTERM");
    await goaway;
    held.release();
    assert.deepEqual(await body, { status: 200, text: "finished" });
    await stopped;
    assert.deepEqual(events, ["stores closed", "exit 0"]);
    session.destroy();
  });

  it("keeps serving with /readyz at 503 during SHUTDOWN_DELAY_MS, then refuses connections", async () => {
    const { server, events, shutdown } = await startHarness({ delayMs: 400 });
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    const stopped = shutdown("SIGTERM");
    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 503);
    const { detail, ...body } = (await ready.json()) as { detail: { state: string } };
    assert.deepEqual(body, { status: 503, title: "Service Unavailable", message: "the server is shutting down" });
    assert.equal(detail.state, "draining");
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    await stopped;
    assert.equal(await refused(server.port), true);
    assert.deepEqual(events, ["stores closed", "exit 0"]);
  });

  it("exits at once with 1 on a second signal", async () => {
    const { server, held, events, shutdown } = await startHarness();
    const response = fetch(`${server.url}/held`).catch(() => undefined);
    await held.arrived;
    const stopped = shutdown("SIGTERM");
    void shutdown("SIGINT");
    assert.deepEqual(events, ["exit 1"]);
    held.release();
    await response;
    await stopped;
  });
});
