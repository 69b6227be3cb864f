import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { paymentIntentIdPattern } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const require = createRequire(import.meta.url);

/**
 * The program an integrator would write: openapi-fetch typed by the types
 * openapi-typescript generated from the served document. The two
 * @ts-expect-error lines make tsc fail unless the types are the real ones
 * (amount is an integer, paths are the API's own).
 */
const program = `
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

const [baseUrl = "", key = ""] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });
const results: Record<string, unknown> = {};

const order = (clientReference: string): components["schemas"]["CreatePaymentIntentRequest"] => ({
  amount: 50000,
  customerEmail: "ada@example.com",
  clientReference,
  paymentMethod: ["card", "bank_transfer"],
  callbackUrl: "https://shop.example.com/paid",
});

const created = await client.POST("/v2/payment-intents", { body: order("gen-1") });
if (!created.data) throw new Error(\`create failed: \${created.response.status}\`);
const id: string = created.data.id;
const amount: string = created.data.amount;
results["create"] = { status: created.response.status, id, amount, location: created.response.headers.get("location") };

const replay = await client.POST("/v2/payment-intents", { body: order("gen-1") });
results["replay"] = {
  status: replay.response.status,
  replayed: replay.response.headers.get("idempotent-replayed"),
  id: replay.data?.id,
};

const second = await client.POST("/v2/payment-intents", { body: order("gen-2") });
const third = await client.POST("/v2/payment-intents", { body: order("gen-3") });
const first = await client.GET("/v2/payment-intents", { params: { query: { pageSize: 2 } } });
const nextPageToken = first.data?.nextPageToken;
if (!nextPageToken) throw new Error("the first page has no nextPageToken");
const last = await client.GET("/v2/payment-intents", { params: { query: { pageSize: 2, pageToken: nextPageToken } } });
results["list"] = {
  created: [id, second.data?.id, third.data?.id],
  statuses: [first.response.status, last.response.status],
  pages: [first.data?.paymentIntents.map((intent) => intent.id), last.data?.paymentIntents.map((intent) => intent.id)],
  lastHasNext: last.data?.nextPageToken !== undefined,
};

const got = await client.GET("/v2/payment-intents/{id}", { params: { path: { id } } });
results["get"] = { status: got.response.status, id: got.data?.id, state: got.data?.status, settlementAccount: got.data?.settlementAccount };

const deleted = await client.DELETE("/v2/payment-intents/{id}", { params: { path: { id } } });
results["delete"] = { status: deleted.response.status, body: deleted.data };

const invalid = await client.POST("/v2/payment-intents", { body: { ...order("gen-4"), amount: 0 } });
results["badRequest"] = { status: invalid.response.status, error: invalid.error };

const anonymous = await createClient<paths>({ baseUrl }).GET("/v2/payment-intents");
results["unauthenticated"] = {
  status: anonymous.response.status,
  wwwAuthenticate: anonymous.response.headers.get("www-authenticate"),
  error: anonymous.error,
};

const gone = await client.GET("/v2/payment-intents/{id}", { params: { path: { id } } });
results["notFound"] = { status: gone.response.status, message: gone.error?.message };

console.log(JSON.stringify(results));

/** Never called: tsc must refuse these, or the types are not the API's. */
export function refusedByTheTypes() {
  // @ts-expect-error amount is a JSON integer, never a string
  void client.POST("/v2/payment-intents", { body: { ...order("x"), amount: "50000" } });
  // @ts-expect-error no such path
  void client.GET("/v2/payment-intent");
}
`;

/**
 * Runs node with args in dir. Asynchronously: the server under test lives in
 * this process, and a blocked event loop would never answer the child.
 */
function run(dir: string, args: string[]) {
  return new Promise<{ status: number | null; stdout: string; output: string }>((resolve) => {
    execFile(process.execPath, args, { cwd: dir, encoding: "utf8", timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, output: `${stdout}${stderr}` });
    });
  });
}

/** The path of a package's command-line program, from its package.json. */
function binOf(name: string, command = name): string {
  const manifest = require.resolve(`${name}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: string | Record<string, string> };
  return path.join(path.dirname(manifest), typeof bin === "string" ? bin : bin[command]!);
}

describe("a client generated from the served document (openapi-typescript + openapi-fetch)", { timeout: 240_000 }, () => {
  let server: TestServer;
  let dir: string;

  before(async () => {
    server = await startTestServer();
    dir = mkdtempSync(path.join(tmpdir(), "generated-client-"));
    // The program resolves openapi-fetch, tsx and @types/node from this project.
    symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          types: ["node"],
          lib: ["ES2023", "DOM"],
        },
        files: ["client.ts"],
      }),
    );
    writeFileSync(path.join(dir, "client.ts"), program);
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("generates types from {BASE_PATH}/openapi.json", async () => {
    const { status, output } = await run(dir, [binOf("openapi-typescript"), `${server.restUrl}/openapi.json`, "--output", "api.ts"]);
    assert.equal(status, 0, output);
    const types = readFileSync(path.join(dir, "api.ts"), "utf8");
    for (const route of ['"/v2/payment-intents"', '"/v2/payment-intents/{id}"', '"/v2/settlement-accounts"']) assert.ok(types.includes(route), route);
  });

  it("type-checks a program using them with tsc", async () => {
    const { status, output } = await run(dir, [binOf("typescript", "tsc"), "-p", "tsconfig.json"]);
    assert.equal(output, "");
    assert.equal(status, 0);
  });

  it("runs against the server at the document's server URL: create, replay, paging, get, delete and three errors", async () => {
    const served = (await (await fetch(`${server.restUrl}/openapi.json`)).json()) as { servers: { url: string }[] };
    const baseUrl = served.servers[0]!.url;
    assert.equal(baseUrl, server.restUrl);
    const { status, stdout, output } = await run(dir, ["--import", "tsx", "client.ts", baseUrl, server.keys.merchantA!]);
    assert.equal(status, 0, output);
    const results = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
    const id = results["create"]!["id"] as string;
    assert.match(id, paymentIntentIdPattern);
    const [, second, third] = results["list"]!["created"] as string[];

    assert.deepEqual(results, {
      create: { status: 201, id, amount: "50000", location: `/v1/v2/payment-intents/${id}` },
      replay: { status: 200, replayed: "true", id },
      list: { created: [id, second, third], statuses: [200, 200], pages: [[third, second], [id]], lastHasNext: false },
      get: { status: 200, id, state: "pending", settlementAccount: null },
      delete: { status: 200, body: { status: 200, title: "OK", message: `Payment intent ${id} deleted` } },
      badRequest: {
        status: 400,
        error: { status: 400, title: "Bad Request", message: "amount must be an integer from 1 to 1000000000000 (kobo)" },
      },
      unauthenticated: {
        status: 401,
        wwwAuthenticate: "Bearer",
        error: { status: 401, title: "Unauthorized", message: "missing Authorization header: send 'Authorization: Bearer <api key>'" },
      },
      notFound: { status: 404, message: `payment intent ${id} not found` },
    });
  });
});
