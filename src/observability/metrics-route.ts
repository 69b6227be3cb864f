import { createHash, timingSafeEqual } from "node:crypto";
import type { Registry } from "prom-client";
import type { HttpRoute } from "../http/http-route.js";
import { headerValues } from "../http/node-http.js";

export interface MetricsRouteOptions {
  registry: Registry;
  /** When set, scrapers must send "Authorization: Bearer <token>" (METRICS_TOKEN). */
  token?: string;
}

/** The path Prometheus scrapes; outside BASE_PATH, since it is not part of the API. */
export const metricsPath = "/metrics";

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * createMetricsRoute serves GET /metrics in the Prometheus text format. With
 * a token, the Authorization header is compared in constant time (over
 * SHA-256 digests, so not even the token's length leaks through timing), and
 * anything else is 401 with WWW-Authenticate: Bearer (RFC 6750 §3).
 */
export function createMetricsRoute(options: MetricsRouteOptions): HttpRoute {
  const expected = options.token === undefined ? undefined : digest(`Bearer ${options.token}`);
  return {
    name: metricsPath,
    methods: ["GET"],
    matches: (path) => path === metricsPath,
    async handle(req, res) {
      if (expected) {
        // Every value Node saw: a repeated header is refused, never "the first one wins".
        const presented = headerValues(req, "authorization");
        const ok = presented.length === 1 && timingSafeEqual(digest(normalizeScheme(presented[0]!)), expected);
        if (!ok) {
          res.writeHead(401, {
            "www-authenticate": 'Bearer realm="metrics"',
            "content-type": "text/plain; charset=utf-8",
            "cache-control": "no-store",
          });
          return void res.end("unauthorized\n");
        }
      }
      const body = await options.registry.metrics();
      res.writeHead(200, { "content-type": options.registry.contentType, "cache-control": "no-store" });
      res.end(body);
    },
  };
}

/** The scheme name is case-insensitive (RFC 9110 §11.1); the token is not. */
function normalizeScheme(header: string): string {
  return header.replace(/^bearer /i, "Bearer ");
}
