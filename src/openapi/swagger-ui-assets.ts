import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** StaticAsset is one file of the docs page, served from our own origin. */
export interface StaticAsset {
  /** Where it is served: {BASE_PATH}/docs/assets/{name}.{hash}.{ext}, so a new version is a new URL. */
  readonly path: string;
  readonly body: Buffer;
  readonly contentType: string;
}

/** SwaggerUiAssets are the files the docs page loads. */
export interface SwaggerUiAssets {
  /** swagger-ui-dist's version. */
  readonly version: string;
  readonly stylesheet: StaticAsset;
  readonly bundle: StaticAsset;
  /** Our script that starts Swagger UI (swagger-ui-init.js). */
  readonly init: StaticAsset;
  readonly favicon: StaticAsset;
}

export interface SwaggerUiAssetsOptions {
  /** BASE_PATH: the assets live under {BASE_PATH}/docs/assets/. */
  basePath: string;
}

/** The trailing source-map comment: the maps are not served, so browsers must not ask for them. */
const sourceMapComment = /\n?(?:\/\/# sourceMappingURL=\S+|\/\*# sourceMappingURL=\S+ ?\*\/)\s*$/;

/**
 * swaggerUiDirectory is where Swagger UI's files are: the copy the build puts
 * next to this module in dist/ (an installed package has no swagger-ui-dist:
 * it is a devDependency, see scripts/build.mjs), else, running from the
 * sources, the swagger-ui-dist package found through module resolution.
 */
function swaggerUiDirectory(): string {
  const copy = fileURLToPath(new URL("./swagger-ui-dist/", import.meta.url));
  if (existsSync(path.join(copy, "package.json"))) return copy;
  return path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
}

/**
 * loadSwaggerUiAssets reads Swagger UI's files (swaggerUiDirectory) and our
 * init script, once, at start-up. Each is named after its content
 * hash, so it can be cached for a year and a new release is a new URL.
 */
export function loadSwaggerUiAssets(options: SwaggerUiAssetsOptions): SwaggerUiAssets {
  const dist = swaggerUiDirectory();
  const packageJson = path.join(dist, "package.json");
  const { version } = JSON.parse(readFileSync(packageJson, "utf8")) as { version: string };

  const asset = (file: string, contentType: string, body: Buffer): StaticAsset => {
    const extension = path.extname(file);
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
    return { path: `${options.basePath}/docs/assets/${path.basename(file, extension)}.${hash}${extension}`, body, contentType };
  };
  const text = (file: string) => Buffer.from(readFileSync(file, "utf8").replace(sourceMapComment, "\n"));

  return {
    version,
    stylesheet: asset("swagger-ui.css", "text/css; charset=utf-8", text(path.join(dist, "swagger-ui.css"))),
    bundle: asset("swagger-ui-bundle.js", "text/javascript; charset=utf-8", text(path.join(dist, "swagger-ui-bundle.js"))),
    init: asset("swagger-ui-init.js", "text/javascript; charset=utf-8", text(fileURLToPath(new URL("./swagger-ui-init.js", import.meta.url)))),
    favicon: asset("favicon-32x32.png", "image/png", readFileSync(path.join(dist, "favicon-32x32.png"))),
  };
}
