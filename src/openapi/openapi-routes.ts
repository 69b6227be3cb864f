import type { HttpRoute } from "../http/http-route.js";
import type { OpenApiDocument } from "./openapi-document.js";
import { createStaticRoute } from "./static-route.js";
import { loadSwaggerUiAssets } from "./swagger-ui-assets.js";
import { renderSwaggerUiPage } from "./swagger-ui-page.js";

/** Where the routes live and the document they serve. */
export interface OpenApiRoutesOptions {
  /** BASE_PATH: the routes live under it, beside the API. */
  basePath: string;
  document: OpenApiDocument;
}

/** Hashed names never change content: caches may keep them for a year without asking. */
const immutable = "public, max-age=31536000, immutable";

/**
 * createOpenApiRoutes serves the document at {BASE_PATH}/openapi.json, Swagger
 * UI at {BASE_PATH}/docs and the page's files under {BASE_PATH}/docs/assets/.
 * All are public (a description of the API is no secret, and client
 * generators fetch it without a key) and prepared once, at start-up: the
 * document cannot change while the process runs, and Swagger UI comes from
 * the installed swagger-ui-dist package, never from a CDN. They are the
 * largest answers anyone can have without a key, so they are encoded once
 * too: every response refers to the same bytes, and a client that asks for
 * many and reads none (pipelining, a closed HTTP/2 window) costs a reference
 * each, not a copy.
 */
export function createOpenApiRoutes(options: OpenApiRoutesOptions): HttpRoute[] {
  const { basePath, document } = options;
  const assets = loadSwaggerUiAssets({ basePath });
  const openApiPath = `${basePath}/openapi.json`;
  const page = renderSwaggerUiPage({ title: document.info.title, openApiPath, serverUrl: document.servers[0]!.url, assets });
  return [
    createStaticRoute(openApiPath, [
      {
        path: openApiPath,
        body: Buffer.from(JSON.stringify(document, null, 2)),
        headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache", "x-content-type-options": "nosniff" },
        compress: true,
      },
    ]),
    createStaticRoute(`${basePath}/docs`, [
      {
        path: `${basePath}/docs`,
        body: Buffer.from(page.html),
        headers: {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-cache",
          "content-security-policy": page.contentSecurityPolicy,
          "x-content-type-options": "nosniff",
          "referrer-policy": "no-referrer",
        },
      },
    ]),
    createStaticRoute(
      `${basePath}/docs/assets/{file}`,
      [assets.stylesheet, assets.bundle, assets.init, assets.favicon].map((asset) => ({
        path: asset.path,
        body: asset.body,
        headers: { "content-type": asset.contentType, "cache-control": immutable, "x-content-type-options": "nosniff" },
        compress: asset.contentType.startsWith("text/"),
      })),
    ),
  ];
}
