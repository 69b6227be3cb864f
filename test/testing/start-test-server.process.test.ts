import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

describe("a test process using startTestServer", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "start-test-server-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("exits by itself after close(), having loaded no PostgreSQL code", async () => {
    const hooks = path.join(dir, "record-loads.mjs");
    writeFileSync(
      hooks,
      `import { registerHooks } from "node:module";
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on("exit", () => process.stdout.write(JSON.stringify(loaded.filter((url) => /\\/node_modules\\/(pg|pg-[a-z-]+|@mikro-orm\\/[a-z-]+|kysely|knex)\\//.test(url)))));
`,
    );
    const script = path.join(dir, "suite.mts");
    writeFileSync(
      script,
      `import { startTestServer } from ${JSON.stringify(pathToFileURL(path.join(repoRoot, "src/testing/index.ts")).href)};
const server = await startTestServer();
const res = await fetch(server.baseUrl + "/v2/payment-intents", { headers: { authorization: "Bearer " + server.apiKey } });
if (res.status !== 200) throw new Error("status " + res.status);
await server.helpers.advanceClock(60);
await server.close();
`,
    );
    const child = spawn(process.execPath, ["--import", pathToFileURL(hooks).href, "--import", "tsx", script], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    // Generous: the machine is shared. A handle left open would keep it alive for good.
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once("exit", (c, s) => resolve([c, s])));
    clearTimeout(timer);
    assert.equal(signal, null, `the process did not exit by itself: ${stderr}`);
    assert.equal(code, 0, stderr);
    assert.deepEqual(JSON.parse(stdout), []);
  });
});
