import { createBearerCheck } from "../http/bearer-check.js";
import { errorBody } from "../http/http-status.js";
import type { HttpRoute } from "../http/http-route.js";
import type { NodeRequest, NodeResponse } from "../http/node-http.js";
import type { Readiness } from "../observability/readiness.js";

export const healthPath = "/healthz";
export const readyPath = "/readyz";

export interface HealthRoutesOptions {
  /**
   * METRICS_TOKEN: when set, /readyz shows its detail only to a request that
   * bears it, as /metrics does; the verdict is for everyone. Unset, the
   * detail is open (keep the port private then, as for /metrics).
   */
  detailToken?: string;
}

/**
 * createHealthRoutes serves the probes at fixed paths outside BASE_PATH and
 * without a key, so an orchestrator needs no credentials and no knowledge of
 * the API's mount point:
 * - GET /healthz: the process is alive and serving HTTP (liveness). It never
 *   looks at the store: restarting the process would not bring a database back.
 * - GET /readyz: whether this instance should receive traffic (readiness.ts),
 *   200 or 503, with a "detail" object saying why: the instance's state, the
 *   database's reachability and pool, pending migrations, and what else
 *   readiness was given (settings findings, the rate-limit backend).
 * Bodies use the service's {status, title, message} shape; HEAD and 405 are
 * the dispatcher's, as for every route.
 */
export function createHealthRoutes(readiness: Readiness, options: HealthRoutesOptions = {}): HttpRoute[] {
  const mayReadDetail = options.detailToken === undefined ? () => true : createBearerCheck(options.detailToken);
  return [
    {
      name: healthPath,
      methods: ["GET"],
      matches: (path) => path === healthPath,
      handle: (_req, res) => send(res, 200, "alive"),
    },
    {
      name: readyPath,
      methods: ["GET"],
      matches: (path) => path === readyPath,
      handle(req: NodeRequest, res) {
        const state = readiness.check();
        const detail = mayReadDetail(req) ? state.detail : undefined;
        if (state.ready) send(res, 200, "ready", detail);
        else send(res, 503, state.reason, detail);
      },
    },
  ];
}

function send(res: NodeResponse, status: number, message: string, detail?: unknown): void {
  const payload = JSON.stringify(detail === undefined ? errorBody(status, message) : { ...errorBody(status, message), detail });
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload), "cache-control": "no-store" });
  // Node leaves the body out of a HEAD response by itself (RFC 9110 §9.3.2).
  res.end(payload);
}
