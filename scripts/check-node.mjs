// Fails fast and clearly unless this project's own Node.js is in place:
// `npm start`, `npm test` and the other scripts run it first.
//
// The "node" devDependency puts Node.js 24 at node_modules/.bin/node, which
// npm scripts put first on PATH. Its install script downloads that Node; npm
// runs it only because package.json "allowScripts" approves it. Were it
// skipped (an npm that blocks unapproved scripts, `--ignore-scripts`), npm
// scripts would quietly run on the machine's own Node, perhaps an old one, so
// that case fails here, as does a running Node older than 22 (MikroORM 7 and
// the test runner need 22).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const minimumMajor = 22;

/** The reason the project's Node cannot run it, or undefined when it can. */
function problem(root) {
  const bin = path.join(root, "node_modules", ".bin", "node");
  const reinstall =
    "The 'node' devDependency's install script, which downloads it, did not run. package.json \"allowScripts\" " +
    "approves it (npm install-scripts ls shows what is not approved); run `npm rebuild node`, or `npm ci`.";
  if (!existsSync(bin)) return `${bin} is missing.\n${reinstall}`;
  let version;
  try {
    version = execFileSync(bin, ["-p", "process.versions.node"], { encoding: "utf8", timeout: 60_000 }).trim();
  } catch (error) {
    return `${bin} does not run (${String(error.message).split("\n")[0]}).\n${reinstall}`;
  }
  if (!(Number(version.split(".")[0]) >= minimumMajor)) {
    return `${bin} is Node.js ${version}: this project needs Node.js ${minimumMajor} or newer.\n${reinstall}`;
  }
  // The project's Node is fine, but this script was run by another one.
  const running = process.versions.node;
  if (Number(running.split(".")[0]) < minimumMajor) {
    return (
      `Node.js ${running} is too old: this project needs Node.js ${minimumMajor} or newer.\n` +
      "Run it through npm scripts (npm start, npm test), which use the Node 24 of the 'node' devDependency."
    );
  }
  return undefined;
}

const reason = problem(path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."));
if (reason) {
  console.error(reason);
  process.exit(1);
}
