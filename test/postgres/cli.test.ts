import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { migrations } from "../../src/store/postgres/migrations/index.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

/** Runs a CLI of src/cli as npm would, and returns its exit code and output. */
async function cli(script: string, args: string[], env: Record<string, string | undefined>) {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", `src/cli/${script}`, ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const unavailable = await postgresUnavailable();

describe("command-line tools", { skip: unavailable }, () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db?.drop());

  it("db:migrate applies the migrations once, then reports the database up to date", async () => {
    const first = await cli("migrate.ts", [], { DATABASE_URL: db.url });
    assert.equal(first.code, 0, first.stderr);
    const names = migrations.map((m) => m.name);
    assert.equal(first.stdout, `applied: ${names.join(", ")}\n`);
    const second = await cli("migrate.ts", [], { DATABASE_URL: db.url });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, "database is up to date\n");
    const { rows } = await queryDatabase(db.url, "select name from mikro_orm_migrations");
    assert.deepEqual(rows.map((r) => r.name).sort(), [...names].sort());
  });

  it("refuses to run without DATABASE_URL, naming it", async () => {
    const result = await cli("migrate.ts", [], { DATABASE_URL: "" });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /DATABASE_URL is required/);
  });

  it("keys create prints a key once and stores only its hash; revoke stops it", async () => {
    const created = await cli("keys.ts", ["create", "--merchant", "acme", "--name", "Acme Stores"], { DATABASE_URL: db.url });
    assert.equal(created.code, 0, created.stderr);
    const match = /^merchant: acme\nmode:     live\nkey id:   (key_[0-9a-f-]{36})\napi key:  (sk_live_[A-Za-z0-9]{36})\n$/.exec(created.stdout);
    assert.ok(match, `unexpected output: ${created.stdout}`);
    const [, keyId, key] = match as unknown as [string, string, string];
    assert.match(created.stderr, /cannot be shown again/);

    // Nothing stored is the key: only its SHA-256 and a short prefix.
    const { rows } = await queryDatabase<Record<string, unknown>>(db.url, "select * from api_keys");
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(key), "the key is stored in clear");
    assert.equal(rows[0]!.key_prefix, key.slice(0, 12));
    const merchants = await queryDatabase(db.url, "select id, name from merchants");
    assert.deepEqual(merchants.rows, [{ id: "acme", name: "Acme Stores" }]);

    const stores = await openMigratedStores(db.url);
    try {
      assert.deepEqual(await stores.apiKeys.verify(key), {
        merchantId: "acme",
        merchantName: "Acme Stores",
        livemode: true,
        keyId,
        // A key from the CLI: every scope, from anywhere, no expiry.
        scopes: [],
        allowedCidrs: [],
        expiresAt: null,
      });
    } finally {
      await stores.close();
    }

    const listed = await cli("keys.ts", ["list"], { DATABASE_URL: db.url });
    assert.equal(listed.code, 0, listed.stderr);
    // id, merchant, mode, prefix, created, state, name (quoted; a CLI key has none).
    assert.match(listed.stdout, new RegExp(`^${keyId}\\tacme\\tlive\\t${key.slice(0, 12)}…\\t\\S+\\tactive\\t""\\n$`));

    const revoked = await cli("keys.ts", ["revoke", keyId], { DATABASE_URL: db.url });
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `revoked ${keyId}\n`);
    const again = await cli("keys.ts", ["revoke", keyId], { DATABASE_URL: db.url });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no active key/);

    const fresh = await openMigratedStores(db.url);
    try {
      assert.equal(await fresh.apiKeys.verify(key), undefined);
    } finally {
      await fresh.close();
    }
    const relisted = await cli("keys.ts", ["list"], { DATABASE_URL: db.url });
    assert.match(relisted.stdout, /\trevoked \S+\t""\n$/);
  });

  it("keys create --mode test makes a test key, its mode read from the prefix", async () => {
    const created = await cli("keys.ts", ["create", "--merchant", "acme-test", "--mode", "test"], { DATABASE_URL: db.url });
    assert.equal(created.code, 0, created.stderr);
    const key = /api key:  (sk_test_[A-Za-z0-9]{36})\n/.exec(created.stdout)?.[1];
    assert.ok(key, created.stdout);
    assert.match(created.stdout, /^merchant: acme-test\nmode:     test\n/);
    const stores = await openMigratedStores(db.url);
    try {
      const principal = await stores.apiKeys.verify(key);
      assert.deepEqual(principal && [principal.merchantId, principal.merchantName, principal.livemode], ["acme-test", "acme-test", false]);
    } finally {
      await stores.close();
    }
    const badMode = await cli("keys.ts", ["create", "--merchant", "acme", "--mode", "sandbox"], { DATABASE_URL: db.url });
    assert.equal(badMode.code, 2);
    assert.match(badMode.stderr, /--mode must be live or test/);
  });

  it("keys answers usage errors with exit code 2", async () => {
    const noCommand = await cli("keys.ts", [], { DATABASE_URL: db.url });
    assert.equal(noCommand.code, 2);
    assert.match(noCommand.stderr, /^usage:/);
    const badMerchant = await cli("keys.ts", ["create", "--merchant", "not valid!"], { DATABASE_URL: db.url });
    assert.equal(badMerchant.code, 2);
    assert.match(badMerchant.stderr, /--merchant must be/);
  });
});
