import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createOpenApiDocument } from "../../src/openapi/openapi-document.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Without a network namespace of its own (unshare, Linux) the lint still
 * runs, but then nothing proves it needs no network: CI runs on Linux.
 */
const offline = spawnSync("unshare", ["--user", "--map-root-user", "--net", "true"]).status === 0;

/** Runs `npm run lint:openapi`'s script, with no network when the system allows. */
function lint(...args: string[]) {
  const command = [process.execPath, "--import", "tsx", "scripts/lint-openapi.ts", ...args];
  const [file, ...rest] = offline ? ["unshare", "--user", "--map-root-user", "--net", ...command] : command;
  // The document as the defaults make it, whatever this shell has set.
  const { PUBLIC_URL: _publicUrl, BASE_PATH: _basePath, ...env } = process.env;
  const result = spawnSync(file!, rest, { cwd: root, encoding: "utf8", env });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("npm run lint:openapi", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "openapi-lint-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`passes Redocly's recommended rules and spectral:oas with no problem at all${offline ? ", offline" : ""}`, () => {
    const { status, output } = lint();
    assert.equal(output.trim(), "redocly lint (recommended): no problems\nspectral lint (spectral:oas): no problems");
    assert.equal(status, 0);
  });

  it("fails on a warning of either linter, naming the rule and the place", () => {
    const document = JSON.parse(JSON.stringify(createOpenApiDocument({ basePath: "/v1", publicUrl: "http://127.0.0.1:8080" })));
    // What the issue found in generated collections: a placeholder where the example's integer belongs.
    document.paths["/v2/payment-intents"].post.requestBody.content["application/json"].examples.basic.value.amount = "<integer>";
    const file = path.join(dir, "broken.json");
    writeFileSync(file, JSON.stringify(document, null, 2));
    const { status, output } = lint(file);
    assert.equal(status, 1);
    assert.match(output, /^redocly warn no-invalid-media-type-examples #\/paths\/~1v2~1payment-intents\/post\/requestBody\/content\/application~1json\/examples\/basic\/value\/amount: /m);
    assert.match(output, /^spectral .*broken\.json:\d+:\d+ error oas3-valid-media-example .*"amount" property type must be integer/m);
  });
});
