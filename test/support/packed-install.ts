import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
/** The project's own Node (24): what runs the integrator's suite, and npm through its shebang. */
export const projectNode = path.join(repoRoot, "node_modules/.bin/node");

/** The outcome of one command. */
export interface CommandRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** commandEnv: the environment a command runs in, with the project's Node first on PATH. */
export function commandEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.dirname(projectNode)}${path.delimiter}${process.env.PATH}`, ...extra };
  // Set by a test runner this runs under; a child `node --test` would report to it instead of its stdout.
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** runCommand spawns a command and collects its output; past timeoutMs it is killed (the result says so). */
export function runCommand(command: string, args: string[], options: { cwd: string; timeoutMs: number; env?: Record<string, string> }): Promise<CommandRun> {
  const started = performance.now();
  const child = spawn(command, args, { cwd: options.cwd, env: commandEnv(options.env), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  return new Promise((resolve) =>
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    }),
  );
}

/** A project that installed this package's tarball as an integrator would. */
export interface PackedInstall {
  /** The integrator's project directory (its package.json, node_modules). */
  project: string;
  /** The files the tarball holds. */
  files: string[];
  /** What `npm install` printed (stdout and stderr), for its warnings. */
  installOutput: string;
}

/**
 * packAndInstall packs this repository (npm pack runs prepare: a fresh
 * build) into work/, and installs the tarball with production dependencies
 * only, plus extra packages, into work/integrator, an empty ESM project.
 * The npm cache makes the install quick; the registry serves what it lacks.
 */
export async function packAndInstall(work: string, extra: string[] = []): Promise<PackedInstall> {
  const pack = await runCommand("npm", ["pack", "--json", "--pack-destination", work], { cwd: repoRoot, timeoutMs: 120_000 });
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const [result] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  const project = path.join(work, "integrator");
  mkdirSync(project);
  writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "integrator-suite", private: true, type: "module" }));
  const install = await runCommand(
    "npm",
    ["install", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", path.join(work, result!.filename), ...extra],
    { cwd: project, timeoutMs: 120_000 },
  );
  if (install.code !== 0) throw new Error(`npm install of the tarball failed:\n${install.stderr}`);
  return { project, files: result!.files.map((file) => file.path), installOutput: install.stdout + install.stderr };
}

/** The versions this repository pins, for installing the same client packages beside the tarball. */
export function pinnedVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const version = manifest.dependencies[name] ?? manifest.devDependencies[name];
  if (!version) throw new Error(`${name} is not a dependency of this repository`);
  return `${name}@${version}`;
}
