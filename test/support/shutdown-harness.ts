import net from "node:net";
import type { HttpRoute } from "../../src/http/http-route.js";
import { silentLogger } from "../../src/lib/logger.js";
import { createShutdown } from "../../src/server/shutdown.js";
import { startTestServer, type TestServer } from "./test-server.js";

/** A route that answers only when the test releases it: a request held in flight. */
export function heldRoute() {
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
export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

export interface Harness {
  server: TestServer;
  held: ReturnType<typeof heldRoute>;
  events: string[];
  shutdown: (reason: string) => Promise<void>;
}

export async function startHarness(options: { delayMs?: number; graceMs?: number } = {}): Promise<Harness> {
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
