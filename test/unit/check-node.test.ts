import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../scripts/check-node.mjs", import.meta.url));

/** A project with a copy of scripts/check-node.mjs and node_modules/.bin/node as setUp makes it. */
function project(base: string, name: string, setUp: (bin: string) => void): string {
  const root = path.join(base, name);
  mkdirSync(path.join(root, "scripts"), { recursive: true });
  mkdirSync(path.join(root, "node_modules", ".bin"), { recursive: true });
  copyFileSync(script, path.join(root, "scripts", "check-node.mjs"));
  setUp(path.join(root, "node_modules", ".bin", "node"));
  return root;
}

/** A stand-in node binary that reports the given version. */
function fakeNode(version: string) {
  return (bin: string) => {
    writeFileSync(bin, `#!/bin/sh\necho ${version}\n`);
    chmodSync(bin, 0o755);
  };
}

/** Runs the copy as `npm start` would, on this (new enough) Node. */
function check(root: string) {
  const result = spawnSync(process.execPath, [path.join(root, "scripts", "check-node.mjs")], { encoding: "utf8" });
  return { status: result.status, stderr: result.stderr };
}

describe("scripts/check-node.mjs (run first by npm start, npm test and the other scripts)", () => {
  const base = mkdtempSync(path.join(tmpdir(), "check-node-"));
  after(() => rmSync(base, { recursive: true, force: true }));

  it("passes when node_modules/.bin/node is Node 22 or newer", () => {
    assert.deepEqual(check(project(base, "ok", (bin) => symlinkSync(process.execPath, bin))), { status: 0, stderr: "" });
    assert.equal(check(project(base, "v22", fakeNode("22.0.0"))).status, 0);
  });

  const failures: [string, (bin: string) => void, RegExp][] = [
    ["missing", () => {}, /node_modules\/\.bin\/node is missing\.\n/],
    // What npm leaves when it skipped the package's install script: a link to a file that was never downloaded.
    ["dangling", (bin) => symlinkSync("../node/bin/node", bin), /node_modules\/\.bin\/node is missing\.\n/],
    ["old", fakeNode("20.11.1"), /node_modules\/\.bin\/node is Node\.js 20\.11\.1: this project needs Node\.js 22 or newer\.\n/],
    ["broken", (bin) => writeFileSync(bin, "not a program", { mode: 0o755 }), /node_modules\/\.bin\/node does not run \(/],
  ];
  for (const [name, setUp, message] of failures) {
    it(`fails with a clear message when node_modules/.bin/node is ${name}`, () => {
      const { status, stderr } = check(project(base, name, setUp));
      assert.equal(status, 1);
      assert.match(stderr, message);
      assert.match(stderr, /"allowScripts" approves it .* run `npm rebuild node`, or `npm ci`\.\n$/);
    });
  }
});
