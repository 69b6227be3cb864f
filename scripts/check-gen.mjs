// Fails when gen/ is not exactly what `buf generate` makes from proto/ now:
// gen/ is committed and never edited by hand (STYLE.md §4), so a proto change
// without `npm run generate`, or a hand edit, must not pass CI. That covers
// both plugins of buf.gen.yaml: protoc-gen-es's code, and protoc-gen-rest's
// REST description in gen/rest/ (the OpenAPI paths and schemas, and the REST
// JSON types of ./testing and the test client), so a changed field rule, or a
// changed generator (scripts/protoc-gen-rest, src/openapi), must be
// regenerated and committed too.
//
// It generates into a temporary directory with the project's own buf.gen.yaml
// (`buf generate -o` prefixes every plugin's out directory) and compares every
// file byte for byte in both directions. The working tree is never written.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The out directories of buf.gen.yaml, e.g. ["gen"]. */
function outDirectories() {
  const template = readFileSync(path.join(root, "buf.gen.yaml"), "utf8");
  const dirs = [...template.matchAll(/^\s*out:\s*["']?([^\s"'#]+)/gm)].map((m) => path.normalize(m[1]));
  if (dirs.length === 0) throw new Error("buf.gen.yaml names no out directory");
  return [...new Set(dirs)];
}

/** Every file under dir, as paths relative to dir; none when dir does not exist. */
function listFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** Generates into scratch and compares; returns the process exit code. */
function check(scratch) {
  // npm scripts put node_modules/.bin on PATH; add it for direct runs too, so
  // buf finds the pinned protoc-gen-es rather than whatever else is installed.
  const env = { ...process.env, PATH: [path.join(root, "node_modules", ".bin"), process.env.PATH].join(path.delimiter) };
  const generated = spawnSync("buf", ["generate", "-o", scratch], { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
  if (generated.error || generated.status !== 0) {
    console.error(`check-gen: buf generate failed${generated.error ? `: ${generated.error.message}` : ` (exit ${generated.status})`}`);
    return 1;
  }

  const problems = [];
  let compared = 0;
  for (const dir of outDirectories()) {
    const fresh = new Set(listFiles(path.join(scratch, dir)));
    const committed = new Set(listFiles(path.join(root, dir)));
    for (const file of fresh) {
      const shown = path.join(dir, file);
      if (!committed.has(file)) {
        problems.push(`missing    ${shown}`);
      } else if (!readFileSync(path.join(scratch, dir, file)).equals(readFileSync(path.join(root, dir, file)))) {
        problems.push(`different  ${shown}`);
      }
      compared++;
    }
    for (const file of committed) {
      if (!fresh.has(file)) problems.push(`extra      ${path.join(dir, file)}`);
    }
  }

  if (problems.length > 0) {
    console.error(`check-gen: generated code is stale (${problems.length} file${problems.length === 1 ? "" : "s"}):`);
    for (const problem of problems) console.error(`  ${problem}`);
    console.error("Run `npm run generate` and commit the result.");
    return 1;
  }
  console.log(`check-gen: ${compared} generated files are up to date`);
  return 0;
}

const scratch = mkdtempSync(path.join(tmpdir(), "check-gen-"));
let exitCode = 1;
try {
  exitCode = check(scratch);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(exitCode);
