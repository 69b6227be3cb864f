import type { SwaggerUiAssets } from "./swagger-ui-assets.js";

/** What the docs page shows and where it loads things from. */
export interface SwaggerUiPageOptions {
  /** The page's title: the API's name. */
  title: string;
  /** Where Swagger UI reads the document: {BASE_PATH}/openapi.json on this origin. */
  openApiPath: string;
  /** The document's server URL (PUBLIC_URL + BASE_PATH), where try-it-out sends requests. */
  serverUrl: string;
  assets: SwaggerUiAssets;
}

/** SwaggerUiPage is the HTML of the docs page and the policy that lets exactly its assets run. */
export interface SwaggerUiPage {
  html: string;
  contentSecurityPolicy: string;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * renderSwaggerUiPage renders the docs page: an empty shell that loads Swagger
 * UI's stylesheet and bundle and our init script, all from this origin.
 *
 * Its Content-Security-Policy allows exactly what Swagger UI needs: scripts
 * and styles from 'self' (no inline script, no eval: the init script is a
 * file; React sets styles through the DOM, which style-src does not govern),
 * images from 'self' and data: (swagger-ui.css draws its icons as data: SVGs),
 * and connections to 'self' (the document) and the server URL's origin
 * (try-it-out, when PUBLIC_URL is not the origin the page was loaded from).
 * Fonts, frames, workers and every other host are refused.
 */
export function renderSwaggerUiPage(options: SwaggerUiPageOptions): SwaggerUiPage {
  const { assets } = options;
  const serverOrigin = new URL(options.serverUrl).origin;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<link rel="icon" type="image/png" sizes="32x32" href="${escapeHtml(assets.favicon.path)}">
<link rel="stylesheet" href="${escapeHtml(assets.stylesheet.path)}">
</head>
<body>
<div id="swagger-ui" data-openapi-url="${escapeHtml(options.openApiPath)}"></div>
<noscript><p>This page needs JavaScript. The API description itself is at <a href="${escapeHtml(options.openApiPath)}">${escapeHtml(options.openApiPath)}</a>.</p></noscript>
<script src="${escapeHtml(assets.bundle.path)}"></script>
<script src="${escapeHtml(assets.init.path)}"></script>
</body>
</html>
`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${serverOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, contentSecurityPolicy };
}
