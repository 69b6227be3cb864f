// npm run lint:openapi [-- document.json]: lints the OpenAPI document the
// service serves (as this environment's PUBLIC_URL and BASE_PATH make it;
// defaults when unset), or the named file, with Redocly's recommended rules
// and Spectral's spectral:oas (.spectral.yaml). Any error, warning or hint of
// either fails. Both run offline: telemetry and update checks are off, and the
// document has no remote reference (test/openapi/lint.process.test.ts runs this without
// a network).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readConfig } from "../src/config.js";
import { createOpenApiDocument } from "../src/openapi/openapi-document.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

/** Runs a package's CLI on this Node (not whatever `node` is first on PATH). */
function runCli(bin: string, args: string[]) {
  const result = spawnSync(process.execPath, [require.resolve(bin), ...args], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
  });
  if (result.error) throw result.error;
  return result;
}

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/** Redocly answers 0 on warnings: read its JSON report and count both. */
function redocly(file: string): boolean {
  const result = runCli("@redocly/cli/bin/cli.js", ["lint", "--extends", "recommended", "--format", "json", file]);
  let report: RedoclyReport;
  try {
    report = JSON.parse(result.stdout) as RedoclyReport;
  } catch {
    console.error(`redocly: no report (exit ${result.status})\n${result.stdout}${result.stderr}`);
    return false;
  }
  for (const problem of report.problems) {
    console.error(`redocly ${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer ?? ""}: ${problem.message}`);
  }
  const clean = report.totals.errors === 0 && report.totals.warnings === 0 && result.status === 0;
  if (clean) console.log("redocly lint (recommended): no problems");
  return clean;
}

function spectral(file: string): boolean {
  const ruleset = path.join(root, ".spectral.yaml");
  const result = runCli("@stoplight/spectral-cli/dist/index.js", ["lint", "--ruleset", ruleset, "--fail-severity", "hint", "--format", "text", file]);
  const output = `${result.stdout}${result.stderr}`.trim();
  if (result.status === 0) {
    console.log("spectral lint (spectral:oas): no problems");
    return true;
  }
  console.error(output.split("\n").map((line) => `spectral ${line}`).join("\n"));
  return false;
}

const named = process.argv[2];
const dir = named ? undefined : mkdtempSync(path.join(tmpdir(), "openapi-lint-"));
try {
  let file = named;
  if (!file) {
    const config = readConfig({ PUBLIC_URL: process.env.PUBLIC_URL, BASE_PATH: process.env.BASE_PATH });
    file = path.join(dir!, "openapi.json");
    writeFileSync(file, JSON.stringify(createOpenApiDocument({ publicUrl: config.publicUrl, basePath: config.basePath }), null, 2));
  }
  // Both run, so one run shows every problem.
  const results = [redocly(file), spectral(file)];
  process.exitCode = results.every(Boolean) ? 0 : 1;
} finally {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
