import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, describe, it } from "node:test";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../support/postgres.js";
import { startServerProcess, type ServerProcess } from "../support/server-process.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Waits until the process has printed the demo banner, and returns the key in it. */
async function demoKeyOf(server: ServerProcess): Promise<string> {
  for (let i = 0; i < 100 && !/API key \S+/.test(server.stdout()); i++) await new Promise((r) => setTimeout(r, 20));
  const match = /No API_KEYS set: demo merchant "demo" with API key (sk_test_[A-Za-z0-9]{36})\n/.exec(server.stdout());
  assert.ok(match, `no demo key in: ${server.stdout()}`);
  return match[1]!;
}

async function createIntent(server: ServerProcess, key: string, reference: string): Promise<Response> {
  return fetch(`${server.url}/v1/v2/payment-intents`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ amount: 50000, customerEmail: "ada@example.com", clientReference: reference }),
  });
}

describe("npm start (src/main.ts as a process)", () => {
  const started: ServerProcess[] = [];
  after(async () => {
    await Promise.all(started.map((s) => s.stop()));
  });

  it("without API_KEYS prints a random demo key and a curl line that work, and never logs the key", async () => {
    const first = await startServerProcess({});
    started.push(first);
    const key = await demoKeyOf(first);
    assert.match(first.stdout(), new RegExp(`curl -s -X POST ${first.url}/v1/v2/payment-intents`));
    assert.match(first.stdout(), new RegExp(`\nDocs, with a try-it-out page: ${first.url}/v1/docs\n`));
    // The banner's, README's and the docs page's first creates each use their own clientReference: trying them in turn is never a 409.
    const reference = (text: string) => /"clientReference": ?"([^"]+)"/.exec(text)?.[1];
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const { createOpenApiExamples } = await import("../../src/openapi/openapi-examples.js");
    const swagger = createOpenApiExamples({ publicUrl: first.url, basePath: "/v1" }).createPaymentIntentRequest;
    const references = [reference(first.stdout()), reference(readme), reference(JSON.stringify(swagger).replaceAll('":"', '": "'))];
    assert.equal(new Set(references).size, 3, references.join(", "));
    assert.ok(references.every((r) => r !== undefined), references.join(", "));
    assert.equal((await createIntent(first, key, "demo-1")).status, 201);
    assert.ok(!first.stderr().includes(key), "the demo key reached the log");

    // Random per start: there is no built-in key.
    const second = await startServerProcess({});
    started.push(second);
    assert.notEqual(await demoKeyOf(second), key);
    assert.equal((await createIntent(second, key, "demo-1")).status, 401);
  });

  it("with API_KEYS prints no demo key and serves those keys", async () => {
    const key = "sk_test_configured_key_123456";
    const server = await startServerProcess({ apiKeys: `acme:${key}` });
    started.push(server);
    assert.equal((await createIntent(server, key, "configured-1")).status, 201);
    assert.doesNotMatch(server.stdout(), /demo/);
  });

  it("stops on a bad setting with one line naming the variable, and exit code 2", async () => {
    const run = promisify(execFile);
    await assert.rejects(
      run(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: repoRoot, env: { ...process.env, PORT: "http" } }),
      (error: { code: number; stderr: string }) => {
        assert.equal(error.code, 2);
        assert.equal(error.stderr, 'configuration error: PORT="http" is not valid: an integer from 0 to 65535\n');
        return true;
      },
    );
  });
});

const unavailable = await postgresUnavailable();

describe("npm start on a fresh PostgreSQL database", { skip: unavailable }, () => {
  let db: TestDatabase;
  const started: ServerProcess[] = [];
  after(async () => {
    await Promise.all(started.map((s) => s.stop()));
    await db?.drop();
  });

  it("migrates, creates a demo key once, and keeps data across restarts", async () => {
    db = await createTestDatabase();
    const first = await startServerProcess({ databaseUrl: db.url });
    started.push(first);
    const key = await demoKeyOf(first);
    const created = await createIntent(first, key, "persisted-1");
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };
    await first.stop();

    // The key is in the database now: a restart prints no new one and accepts it.
    const second = await startServerProcess({ databaseUrl: db.url });
    started.push(second);
    await new Promise((r) => setTimeout(r, 100));
    assert.doesNotMatch(second.stdout(), /demo merchant/);
    const read = await fetch(`${second.url}/v1/v2/payment-intents/${id}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as { clientReference: string }).clientReference, "persisted-1");
  });
});
