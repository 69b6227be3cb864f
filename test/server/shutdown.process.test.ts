import assert from "node:assert/strict";
import net from "node:net";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { startServerProcess } from "../support/server-process.js";
import { refused } from "../support/shutdown-harness.js";

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
