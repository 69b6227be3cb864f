/**
 * The limit of one Node process on this machine: a bare node:http server that
 * parses the same create body, stores it in a Map and answers JSON. No
 * framework, no validation, no authentication. `npm run bench` starts it as a
 * process of its own and compares the service's REST create against it.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

const intents = new Map<string, Record<string, unknown>>();

const server = http.createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(404, { "content-type": "application/json" });
    res.end('{"status":404}');
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end('{"status":400}');
      return;
    }
    const now = new Date().toISOString();
    const intent = { id: `pi_${randomUUID()}`, ...body, status: "pending", createdAt: now, updatedAt: now };
    intents.set(String(body["clientReference"]), intent);
    const payload = JSON.stringify(intent);
    res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
    res.end(payload);
  });
});

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  const { address, port } = server.address() as AddressInfo;
  // The same start line as src/main.ts logs, so the bench starts both alike.
  process.stderr.write(`${JSON.stringify({ msg: "baseline listening", url: `http://${address}:${port}` })}\n`);
});
// At once: keep-alive connections would hold a graceful close.
process.on("SIGTERM", () => process.exit(0));
