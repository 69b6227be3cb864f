import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { accepts, freePort } from "../support/ports.js";
import { commandEnv, packAndInstall, pinnedVersion, projectNode as node, repoRoot, runCommand as run, type PackedInstall } from "../support/packed-install.js";

/** The node:test example of docs/testing.md, "Testing your integration", which must run as printed. */
function readmeExample(): string {
  const readme = readFileSync(path.join(repoRoot, "docs", "testing.md"), "utf8");
  const section = readme.slice(readme.indexOf("### In a Node test suite"));
  const example = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(example, "docs/testing.md has a node:test example under 'In a Node test suite'");
  return example;
}

/** The integrator's test file: plain JavaScript, importing only what the install provides. */
const integratorSuite = `import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { startTestServer } from "payment-intents/testing";
import { PaymentIntentService } from "payment-intents/gen/payments/v2/payment_intent_pb.js";

let server;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test("an intent created over REST, paid by the helper, reads back successful over REST and gRPC", async () => {
  const headers = { authorization: "Bearer " + server.apiKey, "content-type": "application/json" };
  const created = await fetch(server.baseUrl + "/v2/payment-intents", {
    method: "POST",
    headers,
    body: JSON.stringify({ amount: 50000, customerEmail: "ada@example.com", clientReference: "order-1" }),
  });
  assert.equal(created.status, 201);
  const intent = await created.json();
  assert.equal(intent.status, "pending");

  const { attempt, paymentIntent } = await server.helpers.pay(intent.id, "succeeded");
  assert.equal(attempt.outcome, "succeeded");
  assert.equal(paymentIntent.status, "successful");

  const rest = await (await fetch(server.baseUrl + "/v2/payment-intents/" + intent.id, { headers })).json();
  assert.equal(rest.status, "successful");
  assert.equal(rest.transaction, attempt.reference);

  const client = createClient(PaymentIntentService, createGrpcTransport({ baseUrl: server.url }));
  const viaGrpc = await client.getPaymentIntent({ id: intent.id }, { headers: { authorization: "Bearer " + server.apiKey } });
  assert.equal(viaGrpc.status, "successful");
  assert.equal(viaGrpc.transaction, attempt.reference);
  assert.equal(viaGrpc.amount, 50000n);
});
`;

/** Records every module the process loads, and prints the PostgreSQL ones at exit. */
const recordLoads = `import { registerHooks } from "node:module";
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on("exit", () => process.stdout.write(JSON.stringify(loaded.filter((url) => /\\/node_modules\\/(pg|pg-[a-z-]+|@mikro-orm\\/[a-z-]+|kysely|knex)\\//.test(url)))));
`;

describe("the package as an integrator installs it", { timeout: 240_000 }, () => {
  let work: string;
  let project: string;
  let installed: PackedInstall;
  before(async () => {
    work = await mkdtemp(path.join(tmpdir(), "packed-install-"));
    installed = await packAndInstall(work, [pinnedVersion("@connectrpc/connect-node"), pinnedVersion("@bufbuild/protobuf")]);
    project = installed.project;
  });
  after(() => rm(work, { recursive: true, force: true }));

  it("packs the built JavaScript and nothing of the sources or tests", () => {
    const files = installed.files;
    assert.ok(files.includes("dist/src/testing/index.js") && files.includes("dist/src/testing/index.d.ts"));
    assert.ok(files.includes("dist/src/cli/payment-intents.js"));
    assert.deepEqual(files.filter((file) => !file.startsWith("dist/") && file !== "package.json" && file !== "README.md"), []);
    assert.deepEqual(files.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts")), []);
  });

  it("installs without install scripts or their warnings: Swagger UI ships inside the package, so no @scarf/scarf telemetry", () => {
    for (const name of ["@scarf/scarf", "swagger-ui-dist"]) assert.equal(existsSync(path.join(project, "node_modules", name)), false, name);
    assert.doesNotMatch(installed.installOutput, /scarf|telemetry|analytics/i);
    // npm lists the packages whose install scripts it holds back; installed from a tarball, this package's
    // own `prepare` (the build, for a checkout) is listed too. No dependency may have one.
    const listed = [...installed.installOutput.matchAll(/^npm warn install-scripts\s+(\S+)@\S+ \(/gm)].map((m) => m[1]);
    assert.deepEqual(listed.filter((name) => name !== "payment-intents"), []);
    assert.ok(installed.files.includes("dist/src/openapi/swagger-ui-dist/swagger-ui-bundle.js"));
    assert.ok(installed.files.includes("dist/src/openapi/swagger-ui-dist/LICENSE"), "Swagger UI's licence travels with its copy");
  });

  it("installs with production dependencies only: no tsx, no TypeScript", () => {
    for (const tool of ["tsx", "typescript", "esbuild"]) assert.equal(existsSync(path.join(project, "node_modules", tool)), false, tool);
    assert.ok(existsSync(path.join(project, "node_modules/payment-intents/dist/src/testing/index.js")));
  });

  it("runs node --test files that import payment-intents/testing (pay, read back over REST and gRPC; the README's example); they exit by themselves", async () => {
    writeFileSync(path.join(project, "payments.test.js"), integratorSuite);
    writeFileSync(path.join(project, "readme.test.js"), readmeExample());
    // A handle left open would keep a file's process alive until the kill.
    const suite = await run(node, ["--test", "--test-reporter=tap", "payments.test.js", "readme.test.js"], { cwd: project, timeoutMs: 30_000 });
    assert.equal(suite.signal, null, `node --test did not finish by itself:\n${suite.stdout}\n${suite.stderr}`);
    assert.equal(suite.code, 0, `${suite.stdout}\n${suite.stderr}`);
    assert.match(suite.stdout, /^# pass 6$/m);
    assert.match(suite.stdout, /^# fail 0$/m);
  });

  it("declares its types: a TypeScript suite type-checks against payment-intents/testing, and misuse does not", async () => {
    writeFileSync(
      path.join(project, "typed.ts"),
      `import { startTestServer, TestHelperError, type PaymentIntentJson, type TestServer } from "payment-intents/testing";
import { PaymentIntentService } from "payment-intents/gen/payments/v2/payment_intent_pb.js";
const server: TestServer = await startTestServer({ CHECKOUT_TTL: "1h", MAX_PAYMENT_ATTEMPTS: 3, TEST_CLOCK: true });
const base: string = server.baseUrl;
const { attempt, paymentIntent } = await server.helpers.pay("pi_x", "declined", "card", { apiKey: server.apiKey });
const status: PaymentIntentJson["status"] = paymentIntent.status;
const reason: string | null = attempt.declineReason;
const now: string = (await server.helpers.advanceClock(60)).now;
const error = new TestHelperError(404, { status: 404, title: "Not Found", message: "x" }, "GET /x");
const method: string = PaymentIntentService.method.getPaymentIntent.name;
// @ts-expect-error not a setting of the configuration table
await startTestServer({ CHECKOUT_TLL: "1h" });
// @ts-expect-error not an outcome
await server.helpers.pay("pi_x", "maybe");
export { base, status, reason, now, error, method };
`,
    );
    writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          // The integrator's own @types/node; this repository's stands in for it.
          typeRoots: [path.join(repoRoot, "node_modules/@types")],
          types: ["node"],
        },
        files: ["typed.ts"],
      }),
    );
    const tsc = await run(node, [path.join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: project, timeoutMs: 60_000 });
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
  });

  it("loads no PostgreSQL code in a process that starts a test server", async () => {
    writeFileSync(path.join(project, "record-loads.mjs"), recordLoads);
    writeFileSync(
      path.join(project, "start.mjs"),
      `import { startTestServer } from "payment-intents/testing";\nconst server = await startTestServer();\nawait server.close();\n`,
    );
    const started = await run(node, ["--import", pathToFileURL(path.join(project, "record-loads.mjs")).href, "start.mjs"], { cwd: project, timeoutMs: 30_000 });
    assert.equal(started.code, 0, started.stderr);
    assert.deepEqual(JSON.parse(started.stdout), []);
  });

  it("runs docs/testing.md's node:test example as copied into a fresh `npm init -y` project (CommonJS by default)", async () => {
    const fresh = path.join(project, "fresh");
    mkdirSync(fresh);
    const init = await run("npm", ["init", "-y"], { cwd: fresh, timeoutMs: 30_000 });
    assert.equal(init.code, 0, init.stderr);
    const example = readmeExample();
    // The file name the example gives itself in its first line, as a reader saves it.
    const name = /^\/\/ (\S+\.test\.[cm]?js)\b/.exec(example)?.[1];
    assert.ok(name, `the example names its file in its first line: ${example.split("\n")[0]}`);
    writeFileSync(path.join(fresh, name), example);
    // payment-intents resolves from the project's node_modules above, as from the fresh project's own.
    const suite = await run(node, ["--test", "--test-reporter=tap"], { cwd: fresh, timeoutMs: 30_000 });
    assert.equal(suite.code, 0, `${suite.stdout}\n${suite.stderr}`);
    assert.match(suite.stdout, /^# fail 0$/m);
    assert.doesNotMatch(suite.stdout, /^# pass 0$/m);
  });

  it("npx payment-intents serve: a SIGTERM to npx's own PID stops the server and frees the port", async () => {
    const port = String(await freePort());
    const npx = spawn("npx", ["payment-intents", "serve"], {
      cwd: project,
      env: commandEnv({ PORT: port, HOST: "127.0.0.1", SHUTDOWN_GRACE_MS: "2000", LOG_LEVEL: "warn" }),
      stdio: "ignore",
      // Its own process group: only npx gets the signal, as from a shell's `kill <pid>` of `npx … &`.
      detached: true,
    });
    try {
      for (let i = 0; i < 300 && !(await accepts(Number(port))); i++) await delay(100);
      assert.ok(await accepts(Number(port)), "npx payment-intents serve never listened");
      process.kill(npx.pid!, "SIGTERM");
      const killedAt = performance.now();
      while ((await accepts(Number(port))) && performance.now() - killedAt < 5000) await delay(50);
      assert.equal(await accepts(Number(port)), false, "the server still holds the port after npx was killed");
    } finally {
      try {
        process.kill(-npx.pid!, "SIGKILL");
      } catch {}
    }
  });

  it("serves with `payment-intents serve` from node_modules/.bin, helpers on, and stops on SIGTERM", async () => {
    const bin = path.join(project, "node_modules/.bin/payment-intents");
    const env = commandEnv({ PORT: "0", HOST: "127.0.0.1" });
    const child = spawn(bin, ["serve"], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line within 20 s:\n${stderr}`)), 20_000);
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk;
        const found = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]!);
        }
      });
      child.once("exit", () => reject(new Error(`exited before listening:\n${stderr}`)));
    });
    try {
      const merchant = await fetch(`${url}/v1/v2/test-helpers/merchants`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      assert.equal(merchant.status, 201);
      assert.match(stderr, /test helpers are on/);
      // The docs page's Swagger UI comes from the package's own copy (swagger-ui-dist is not installed).
      const page = await fetch(`${url}/v1/docs`);
      assert.equal(page.status, 200);
      const bundle = /src="([^"]*swagger-ui-bundle\.[0-9a-f]{16}\.js)"/.exec(await page.text())?.[1];
      assert.ok(bundle, "the docs page names its bundle");
      const script = await fetch(new URL(bundle, `${url}/v1/docs`));
      assert.deepEqual([script.status, script.headers.get("content-type")], [200, "text/javascript; charset=utf-8"]);
    } finally {
      child.kill("SIGTERM");
    }
    const [code] = await new Promise<[number | null]>((resolve) => child.once("exit", (c) => resolve([c])));
    assert.equal(code, 0, stderr);
  });
});
