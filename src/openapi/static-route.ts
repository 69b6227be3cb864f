import { promisify } from "node:util";
import { gzip as gzipCallback } from "node:zlib";
import { pathOf, type HttpRoute } from "../http/http-route.js";
import type { NodeRequest, NodeResponse } from "../http/node-http.js";

const gzip = promisify(gzipCallback);

/** StaticResource is one fixed response: a body and its headers, at one path. */
export interface StaticResource {
  readonly path: string;
  readonly body: Buffer;
  /** Content-Type, Cache-Control and whatever else the resource needs. */
  readonly headers: Record<string, string>;
  /** Whether to send it gzipped to clients that accept that (text worth compressing). */
  readonly compress?: boolean;
}

/**
 * acceptsGzip tells whether an Accept-Encoding header allows gzip
 * (RFC 9110 §12.5.3): gzip or * listed without q=0.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(",").some((entry) => {
    const [coding = "", ...parameters] = entry.split(";").map((part) => part.trim().toLowerCase());
    if (coding !== "gzip" && coding !== "x-gzip" && coding !== "*") return false;
    const q = parameters.find((parameter) => parameter.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * createStaticRoute serves fixed resources (GET, and HEAD through the
 * dispatcher). Bodies are in memory; a compressible one is gzipped on its
 * first request that accepts gzip, once, off the event loop, and kept.
 *
 * @param name the route's label in logs and metrics, such as
 *   "/v1/docs/assets/{file}": never a raw path.
 */
export function createStaticRoute(name: string, resources: readonly StaticResource[]): HttpRoute {
  const byPath = new Map(resources.map((resource) => [resource.path, resource]));
  const gzipped = new Map<string, Promise<Buffer>>();
  const gzipOf = (resource: StaticResource) => {
    let body = gzipped.get(resource.path);
    if (!body) {
      body = gzip(resource.body, { level: 9 });
      gzipped.set(resource.path, body);
    }
    return body;
  };
  return {
    name,
    methods: ["GET"],
    matches: (path) => byPath.has(path),
    async handle(req: NodeRequest, res: NodeResponse) {
      const resource = byPath.get(pathOf(req.url))!;
      const headers: Record<string, string | number> = { ...resource.headers };
      let body = resource.body;
      if (resource.compress) {
        // Add to a Vary the dispatcher set (Origin, under CORS): writeHead would replace it.
        const vary = res.getHeader("vary");
        headers["vary"] = vary === undefined ? "accept-encoding" : `${String(vary)}, accept-encoding`;
        if (acceptsGzip(req.headers["accept-encoding"])) {
          body = await gzipOf(resource);
          headers["content-encoding"] = "gzip";
        }
      }
      headers["content-length"] = body.length;
      res.writeHead(200, headers);
      res.end(req.method === "HEAD" ? undefined : body);
    },
  };
}
