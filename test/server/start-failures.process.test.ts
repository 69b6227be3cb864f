import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { adminQuery, postgresUnavailable } from "../support/postgres.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Runs `npm start`'s entry point with env and returns how it ended; it must end by itself. */
async function start(env: Record<string, string>): Promise<{ code: number; stderr: string; stdout: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: repoRoot,
      env: { ...process.env, LOG_LEVEL: "silent", ...env },
      timeout: 30_000,
    });
    return { code: 0, stderr, stdout };
  } catch (error) {
    const failed = error as { code: number; stderr: string; stdout: string };
    return { code: failed.code, stderr: failed.stderr, stdout: failed.stdout };
  }
}

/** One line, exit code 1, no stack: what a person at a terminal needs. */
function assertOneLine(outcome: { code: number; stderr: string }, expected: string) {
  assert.equal(outcome.code, 1, outcome.stderr);
  assert.equal(outcome.stderr, `start-up error: ${expected}\n`);
}

describe("start-up failures, each in one line", () => {
  it("a port in use names the port and what to do", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as net.AddressInfo;
    try {
      assertOneLine(
        await start({ PORT: String(port) }),
        `port ${port} on 127.0.0.1 is already in use, probably by another run of this service: stop it (lsof -i :${port} shows it), or set PORT to another port`,
      );
    } finally {
      holder.close();
    }
  });

  it("an unreachable database names its address, never the password", async () => {
    const outcome = await start({ DATABASE_URL: "postgres://someone:s3cret-pw@127.0.0.1:1/payments", PORT: "0" });
    assertOneLine(outcome, "the database at 127.0.0.1:1 could not be reached (ECONNREFUSED): is PostgreSQL running there? Check the host and port in DATABASE_URL");
    assert.ok(!outcome.stderr.includes("s3cret-pw"));
  });
});

const unavailable = await postgresUnavailable();

describe("start-up failures of the database, each in one line", { skip: unavailable }, () => {
  const role = `firstrun_norights_${process.pid}`;
  before(async () => {
    await adminQuery(`drop database if exists ${role}`);
    await adminQuery(`drop role if exists ${role}`);
    await adminQuery(`create role ${role} login`);
    // Owned by postgres: on PostgreSQL 15 the role may connect but not create tables in schema public.
    await adminQuery(`create database ${role}`);
  });
  after(async () => {
    await adminQuery(`drop database if exists ${role}`);
    await adminQuery(`drop role if exists ${role}`);
  });

  it("a missing database says to create it", async () => {
    assertOneLine(
      await start({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/no_such_database_here", PORT: "0" }),
      'database "no_such_database_here" does not exist on 127.0.0.1:5432: create it (createdb no_such_database_here), or fix the database in DATABASE_URL',
    );
  });

  it("an unknown role says to create it", async () => {
    assertOneLine(
      await start({ DATABASE_URL: "postgres://no_such_role_here@127.0.0.1:5432/postgres", PORT: "0" }),
      'the database refused role "no_such_role_here" (role "no_such_role_here" does not exist): create the role (createuser no_such_role_here), or fix the user in DATABASE_URL',
    );
  });

  it("a failed migration names the database's reason and the way out", async () => {
    assertOneLine(
      await start({ DATABASE_URL: `postgres://${role}@127.0.0.1:5432/${role}`, PORT: "0" }),
      "a database migration failed: permission denied for schema public; fix the cause (the database role needs to create tables), or set MIGRATE_ON_START=false and migrate as a separate step (npm run db:migrate)",
    );
  });
});
