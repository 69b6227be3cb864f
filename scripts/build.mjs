// npm run build (run by prepare, so by npm install, npm ci and npm pack):
// compiles src/ and gen/ into dist/ with tsconfig.build.json, and copies the
// files next to the modules that read them at run time (Swagger UI's start-up
// script, and Swagger UI's own files with their licence: see below), and makes the package's commands executable (npm does that for an
// install, not for `npx payment-intents` in this checkout). dist/ is build
// output: never committed, rebuilt from scratch.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = path.join(root, "dist");

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", path.join(root, "tsconfig.build.json")], { stdio: "inherit" });

/** Every file under dir that TypeScript does not compile. */
function assets(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return assets(file);
    return entry.name.endsWith(".ts") ? [] : [file];
  });
}
for (const file of assets(path.join(root, "src"))) cpSync(file, path.join(dist, path.relative(root, file)));

// Swagger UI ships inside the package (dist/src/openapi/swagger-ui-dist/), so
// swagger-ui-dist is a devDependency: an installing project then never gets
// its dependency @scarf/scarf, whose install script pings a telemetry server
// (and npm warns about). Only the files the docs page serves, the package's
// version, and its licence and notices travel.
const swaggerUi = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const swaggerUiCopy = path.join(dist, "src/openapi/swagger-ui-dist");
for (const file of ["package.json", "LICENSE", "NOTICE", "swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-bundle.js.LICENSE.txt", "favicon-32x32.png"]) {
  cpSync(path.join(swaggerUi, file), path.join(swaggerUiCopy, file));
}

const { bin } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
for (const file of Object.values(bin)) chmodSync(path.join(root, file), 0o755);
