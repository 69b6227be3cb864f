/**
 * npx tsx bench/startup.ts [--runs 10]
 *
 * How long an integrator waits for the sandbox, from the call or command to
 * its first answered request, median of --runs (10) each. It packs this
 * repository and installs the tarball into a temporary project as an
 * integrator would (npm pack, npm install --omit=dev), then measures there:
 *  - startTestServer() from payment-intents/testing, in a process that has
 *    started one before (warm: its modules are loaded, as from a suite's
 *    second test on), to an answered GET {baseUrl}/v2/payment-intents with
 *    the server's key. Target: 150 ms.
 *  - `npx payment-intents serve` and node_modules/.bin/payment-intents serve
 *    (the same without npx), each a new process, to an answered GET
 *    /healthz. Target for the command: 1 s.
 *  - `npm start` in this checkout (tsx), for comparison.
 *    The three commands take turns, so a passing load on a shared machine
 *    weighs on each alike.
 * It prints the figures and writes nothing; the temporary project is removed.
 * Everything runs on 127.0.0.1. bench/run.ts can call runStartupBench().
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { commandEnv, packAndInstall, repoRoot } from "../test/support/packed-install.js";
import { freePort } from "../test/support/ports.js";

/** The issue's targets, in milliseconds: startTestServer() warm, and the command. */
export const startupTargets = { testServer: 150, command: 1000 } as const;

/** A distribution of start-up times, in milliseconds. */
export interface Summary {
  median: number;
  min: number;
  max: number;
}

/** What runStartupBench measured. */
export interface StartupResult {
  runs: number;
  /** startTestServer() to its first answered request, in a warm process. Target: 150 ms. */
  testServer: Summary;
  /** `npx payment-intents serve` to its first answer. Target: 1 s. */
  npx: Summary;
  /** node_modules/.bin/payment-intents serve, the same without npx. */
  bin: Summary;
  /** `npm start` in the checkout (tsx), for comparison. */
  npmStart: Summary;
}

const env = commandEnv({ LOG_LEVEL: "warn" });

function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** Asks url until it answers; resolves with performance.now() at the answer. */
async function firstAnswer(url: string, deadline: number): Promise<number> {
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return performance.now();
    } catch {
      if (performance.now() > deadline) throw new Error(`${url} did not answer in time`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    await (await fetch(url)).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/** Starts command in a new process and measures the time to its first answered /healthz. */
async function coldStart(command: string, args: string[], cwd: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  // Its own process group: npx and npm run the service under a shell, which does not pass SIGTERM on.
  const child = spawn(command, args, {
    cwd,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const answered = await Promise.race([
      firstAnswer(`http://127.0.0.1:${port}/healthz`, started + 30_000),
      exited.then(() => Promise.reject(new Error(`${command} exited before answering:\n${stderr}`))),
    ]);
    return answered - started;
  } finally {
    process.kill(-child.pid!, "SIGTERM");
    const killer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 10_000);
    await exited;
    clearTimeout(killer);
    // The service may outlive npm's exit by a moment: wait until the port is free.
    while (await answers(`http://127.0.0.1:${port}/healthz`)) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface ColdCommand {
  command: string;
  args: string[];
  cwd: string;
}

/**
 * measureCold starts each command runs times, taking turns, so a load that
 * comes and goes on a shared machine weighs on every command alike.
 */
async function measureCold(commands: ColdCommand[], runs: number): Promise<Summary[]> {
  // The file system cache (and Node's compile cache), not the figure.
  for (const { command, args, cwd } of commands) await coldStart(command, args, cwd);
  const samples: number[][] = commands.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [index, { command, args, cwd }] of commands.entries()) samples[index]!.push(await coldStart(command, args, cwd));
  }
  return samples.map(summarize);
}

/** startTestServer() to an answered API request, in this (warm) process. */
async function measureTestServer(project: string, runs: number): Promise<Summary> {
  const entry = path.join(project, "node_modules/payment-intents/dist/src/testing/index.js");
  const testing = (await import(pathToFileURL(entry).href)) as typeof import("../src/testing/index.js");
  const once = async () => {
    const started = performance.now();
    const server = await testing.startTestServer();
    const res = await fetch(`${server.baseUrl}/v2/payment-intents`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    if (res.status !== 200) throw new Error(`GET /v2/payment-intents answered ${res.status}`);
    await res.arrayBuffer();
    const elapsed = performance.now() - started;
    await server.close();
    return elapsed;
  };
  // Warm: modules loaded, the HTTP client initialised, as in a suite's second test file onwards.
  await once();
  await once();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once());
  return summarize(samples);
}

/**
 * runStartupBench packs and installs the package into a temporary directory,
 * measures there, removes it, and returns the figures.
 */
export async function runStartupBench(options: { runs: number; log?: (line: string) => void }): Promise<StartupResult> {
  const { runs } = options;
  const work = mkdtempSync(path.join(tmpdir(), "startup-bench-"));
  try {
    options.log?.("packing and installing the package into a temporary project");
    const { project } = await packAndInstall(work);
    const testServer = await measureTestServer(project, runs);
    const [npx, bin, npmStart] = await measureCold(
      [
        { command: "npx", args: ["--no-install", "payment-intents", "serve"], cwd: project },
        { command: path.join(project, "node_modules/.bin/payment-intents"), args: ["serve"], cwd: project },
        { command: "npm", args: ["start", "--silent"], cwd: repoRoot },
      ],
      runs,
    );
    return { runs, testServer, npx: npx!, bin: bin!, npmStart: npmStart! };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The figures as a markdown table, with the targets. */
export function renderStartup(result: StartupResult): string {
  const row = (what: string, summary: Summary, target?: number) =>
    `| ${what} | ${summary.median.toFixed(0)} ms | ${summary.min.toFixed(0)}–${summary.max.toFixed(0)} ms | ${
      target === undefined ? "" : `${target} ms: ${summary.median <= target ? "met" : "not met"}`
    } |`;
  return [
    `Start-up to the first answered request, median of ${result.runs} (Node ${process.versions.node}):`,
    "",
    "| What | Median | Range | Target |",
    "|---|---|---|---|",
    row("`startTestServer()` in a warm process", result.testServer, startupTargets.testServer),
    row("`npx payment-intents serve`", result.npx, startupTargets.command),
    row("`node_modules/.bin/payment-intents serve` (without npx)", result.bin),
    row("`npm start` in the checkout (tsx, for comparison)", result.npmStart),
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values: flags } = parseArgs({ options: { runs: { type: "string", default: "10" } } });
  const log = (line: string) => process.stdout.write(`# ${line}\n`);
  const result = await runStartupBench({ runs: Number(flags.runs), log });
  process.stdout.write(`\n${renderStartup(result)}\n`);
}
