import { errorBody } from "../transport/http-status.js";
import type { HttpRoute } from "./http-route.js";
import type { NodeRequest, NodeResponse } from "./node-http.js";
import type { Readiness } from "./readiness.js";

export const healthPath = "/healthz";
export const readyPath = "/readyz";

/**
 * createHealthRoutes serves the probes at fixed paths outside BASE_PATH and
 * without a key, so an orchestrator needs no credentials and no knowledge of
 * the API's mount point:
 * - GET /healthz: the process is alive and serving HTTP (liveness). It never
 *   looks at the store: restarting the process would not bring a database back.
 * - GET /readyz: the instance can serve requests now (readiness): the store
 *   answers and the server is not shutting down; otherwise 503.
 * Bodies use the service's {status, title, message} shape.
 */
export function createHealthRoutes(readiness: Readiness): HttpRoute[] {
  return [
    {
      name: healthPath,
      matches: (path) => path === healthPath,
      handle(req, res) {
        reply(req, res, 200, "alive");
      },
    },
    {
      name: readyPath,
      matches: (path) => path === readyPath,
      async handle(req, res) {
        if (!allowed(req, res)) return;
        const state = await readiness.check();
        if (state.ready) send(req, res, 200, "ready", {});
        else send(req, res, 503, state.reason, {});
      },
    },
  ];
}

function allowed(req: NodeRequest, res: NodeResponse): boolean {
  if (req.method === "GET" || req.method === "HEAD") return true;
  send(req, res, 405, `${req.method} is not allowed on ${req.url}`, { allow: "GET, HEAD" });
  return false;
}

function reply(req: NodeRequest, res: NodeResponse, status: number, message: string): void {
  if (allowed(req, res)) send(req, res, status, message, {});
}

function send(req: NodeRequest, res: NodeResponse, status: number, message: string, headers: Record<string, string>): void {
  const payload = JSON.stringify(errorBody(status, message));
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(payload),
    "cache-control": "no-store",
  });
  // A HEAD response carries the headers of the GET one and no body (RFC 9110 §9.3.2).
  res.end(req.method === "HEAD" ? "" : payload);
}
