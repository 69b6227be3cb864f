import type { HttpRoute } from "../server/http-route.js";
import type { NodeRequest, NodeResponse } from "../server/node-http.js";
import { renderDocsPage } from "./docs-page.js";
import type { OpenApiDocument } from "./openapi-document.js";

export interface OpenApiRoutesOptions {
  basePath: string;
  document: OpenApiDocument;
}

/**
 * createOpenApiRoutes serves the document at {BASE_PATH}/openapi.json and its
 * rendering at {BASE_PATH}/docs. Both are public (a description of the API is
 * no secret, and client generators fetch it without a key) and rendered once,
 * at start-up: the document cannot change while the process runs.
 */
export function createOpenApiRoutes(options: OpenApiRoutesOptions): HttpRoute[] {
  const json = JSON.stringify(options.document, null, 2);
  const page = renderDocsPage(options.document);
  return [
    staticRoute(`${options.basePath}/openapi.json`, json, {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
    }),
    staticRoute(`${options.basePath}/docs`, page.html, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      "content-security-policy": page.contentSecurityPolicy,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    }),
  ];
}

function staticRoute(path: string, body: string, headers: Record<string, string>): HttpRoute {
  const length = Buffer.byteLength(body);
  return {
    name: path,
    matches: (candidate) => candidate === path,
    handle(req: NodeRequest, res: NodeResponse) {
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
        return void res.end("method not allowed\n");
      }
      res.writeHead(200, { ...headers, "content-length": length });
      res.end(req.method === "HEAD" ? "" : body);
    },
  };
}
