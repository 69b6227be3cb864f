import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { silentLogger } from "../../src/lib/logger.js";
import type { HttpRoute } from "../../src/http/http-route.js";
import { createShutdown } from "../../src/server/shutdown.js";
import { startServerProcess } from "../support/server-process.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** A route that answers only when the test releases it: a request held in flight. */
function heldRoute() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const arrived = new Promise<void>((resolve) => (entered = resolve));
  const route: HttpRoute = {
    matches: (path) => path === "/held",
    async handle(_req, res) {
      entered();
      await released;
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("finished");
    },
  };
  return { route, arrived, release };
}

/** refused resolves true when a new TCP connection to port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

interface Harness {
  server: TestServer;
  held: ReturnType<typeof heldRoute>;
  events: string[];
  shutdown: (reason: string) => Promise<void>;
}

async function startHarness(options: { delayMs?: number; graceMs?: number } = {}): Promise<Harness> {
  const held = heldRoute();
  const server = await startTestServer({ httpRoutes: [held.route] });
  const { readiness } = server.service;
  const events: string[] = [];
  const shutdown = createShutdown({
    readiness,
    server,
    closeStores: async () => {
      events.push("stores closed");
    },
    delayMs: options.delayMs ?? 0,
    graceMs: options.graceMs ?? 5000,
    logger: silentLogger,
    exit: (code) => events.push(`exit ${code}`),
  });
  return { server, held, events, shutdown };
}

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

  it("cuts requests still running when the grace period ends, and still exits 0", async () => {
    const { server, held, events, shutdown } = await startHarness({ graceMs: 200 });
    // Settled at once, so the cut is not an unhandled rejection while shutdown runs.
    const response = fetch(`${server.url}/held`).then(
      () => "answered",
      () => "cut",
    );
    await held.arrived;
    const started = performance.now();
    await shutdown("SIGTERM");
    const took = performance.now() - started;
    assert.ok(took >= 180 && took < 2000, `shutdown took ${Math.round(took)} ms with a 200 ms grace`);
    assert.equal(await response, "cut");
    assert.deepEqual(events, ["stores closed", "exit 0"]);
    held.release();
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

describe("SIGTERM to the process (src/main.ts)", () => {
  it("finishes a request in flight, refuses new connections, and exits 0", async () => {
    const key = "sk_test_shutdown_key_00001";
    const server = await startServerProcess({ apiKeys: `acme:${key}` });
    try {
      const port = Number(new URL(server.url).port);
      const body = JSON.stringify({ amount: 50000, customerEmail: "ada@example.com", clientReference: "in-flight-1" });
      const socket = net.connect({ host: "127.0.0.1", port });
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      let received = "";
      socket.setEncoding("latin1");
      socket.on("data", (chunk: string) => (received += chunk));
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      // Headers and half the body: the request is in flight, waiting for the rest.
      const half = Math.floor(body.length / 2);
      socket.write(
        `POST /v1/v2/payment-intents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
      );
      await delay(200);

      server.child.kill("SIGTERM");
      for (let i = 0; i < 50 && !(await refused(port)); i++) await delay(20);
      assert.equal(await refused(port), true, "the port still accepts connections after SIGTERM");

      socket.write(body.slice(half));
      await closed;
      assert.match(received, /^HTTP\/1\.1 201 Created\r\n/);
      assert.match(received, /\r\nConnection: close\r\n/i);
      assert.equal(JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4)).clientReference, "in-flight-1");
      assert.equal(await server.exited, "0");
      assert.match(server.stderr(), /"msg":"shutting down"/);
    } finally {
      await server.stop();
    }
  });
});
