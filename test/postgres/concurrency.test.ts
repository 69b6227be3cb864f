import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDatabase, postgresUnavailable, queryDatabase, type TestDatabase } from "../support/postgres.js";
import { newApiKey, startPostgresApp, type PostgresApp } from "./support/postgres-app.js";
import { migrations } from "../../src/store/postgres/migrations/index.js";
import { startServerProcess, type ServerProcess } from "../support/server-process.js";

const skip = await postgresUnavailable();

interface Reply {
  status: number;
  replayed: string | null;
  body: { id?: string; status?: number; title?: string; message?: string };
}

/** createIntent posts one REST create and reads the whole reply. */
async function createIntent(baseUrl: string, key: string, body: unknown): Promise<Reply> {
  const res = await fetch(`${baseUrl}/v1/v2/payment-intents`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), body: (await res.json()) as Reply["body"] };
}

/**
 * assertOneCreated checks a burst of identical creates: exactly one 201, every
 * other answer a 200 replay of the same intent, nothing else.
 */
function assertOneCreated(replies: Reply[]): string {
  const statuses = replies.map((r) => r.status);
  assert.deepEqual(
    statuses.filter((s) => s !== 200 && s !== 201),
    [],
    `unexpected answers: ${JSON.stringify(replies.filter((r) => r.status !== 200 && r.status !== 201))}`,
  );
  assert.equal(statuses.filter((s) => s === 201).length, 1, `201s: ${statuses.join(",")}`);
  for (const reply of replies) {
    assert.equal(reply.replayed, reply.status === 200 ? "true" : null, `replay header of a ${reply.status}`);
  }
  const ids = new Set(replies.map((r) => r.body.id));
  assert.equal(ids.size, 1, `ids: ${[...ids].join(", ")}`);
  return replies[0]!.body.id!;
}

async function countIntents(db: TestDatabase, reference: string): Promise<number> {
  const { rows } = await queryDatabase<{ n: string }>(
    db.url,
    "select count(*) as n from payment_intents where client_reference = $1",
    [reference],
  );
  return Number(rows[0]!.n);
}

describe("PostgreSQL concurrent creates", { skip }, () => {
  describe("two app instances in one process, each with its own pool", () => {
    let db: TestDatabase;
    const apps: PostgresApp[] = [];
    const key = newApiKey();

    before(async () => {
      db = await createTestDatabase();
      // Both open (and migrate) at once, as instances starting together do.
      apps.push(
        ...(await Promise.all([
          startPostgresApp({ databaseUrl: db.url, keys: { merchantA: key } }),
          startPostgresApp({ databaseUrl: db.url, keys: { merchantA: key } }),
        ])),
      );
    });
    after(async () => {
      await Promise.all(apps.map((app) => app.close()));
      await db?.drop();
    });

    it("writes one row for 40 identical creates across both, and replays it to the other 39", async () => {
      const body = { amount: 25000, customerEmail: "ada@example.com", clientReference: "race-inproc-1" };
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => createIntent(apps[i % 2]!.url, key, body)),
      );
      const id = assertOneCreated(replies);
      assert.equal(replies.filter((r) => r.status === 200).length, 39);
      assert.equal(await countIntents(db, body.clientReference), 1);

      const conflicts = await Promise.all(
        apps.map((app) => createIntent(app.url, key, { ...body, amount: 25001 })),
      );
      for (const conflict of conflicts) {
        assert.equal(conflict.status, 409, JSON.stringify(conflict.body));
        assert.deepEqual(conflict.body, {
          status: 409,
          title: "Conflict",
          message: `clientReference ${body.clientReference} is already used by payment intent ${id} with a different request`,
        });
      }
      assert.equal(await countIntents(db, body.clientReference), 1);
    });

    it("answers a burst of different bodies on one reference with one 201 and 409s, never a 5xx", async () => {
      const reference = "race-inproc-2";
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          createIntent(apps[i % 2]!.url, key, { amount: 1000 + i, customerEmail: "ada@example.com", clientReference: reference }),
        ),
      );
      assert.deepEqual(
        replies.map((r) => r.status).sort(),
        [201, ...Array<number>(19).fill(409)],
        JSON.stringify(replies.filter((r) => r.status >= 500)),
      );
      assert.equal(await countIntents(db, reference), 1);
    });
  });

  describe("two server processes on one database", () => {
    let db: TestDatabase;
    const servers: ServerProcess[] = [];
    const key = newApiKey();

    before(async () => {
      db = await createTestDatabase();
      // Started at the same moment on an empty database: both run the
      // migrations at start, and both must come up.
      const started = await Promise.allSettled([
        startServerProcess({ databaseUrl: db.url, apiKeys: `merchantA:${key}` }),
        startServerProcess({ databaseUrl: db.url, apiKeys: `merchantA:${key}` }),
      ]);
      for (const result of started) if (result.status === "fulfilled") servers.push(result.value);
      for (const result of started) if (result.status === "rejected") throw result.reason;
    });
    after(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await db?.drop();
    });

    it("both came up, and the schema was migrated exactly once", async () => {
      assert.equal(servers.length, 2);
      const { rows } = await queryDatabase<{ name: string }>(db.url, "select name from mikro_orm_migrations order by id");
      assert.deepEqual(
        rows.map((r) => r.name),
        migrations.map((m) => m.name),
      );
    });

    it("writes one row for 60 identical creates spread over both processes", async () => {
      const body = { amount: 42000, customerEmail: "ada@example.com", clientReference: "race-processes-1" };
      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) => createIntent(servers[i % 2]!.url, key, body)),
      );
      assertOneCreated(replies);
      assert.equal(replies.filter((r) => r.status === 200).length, 59);
      assert.equal(await countIntents(db, body.clientReference), 1);
    });
  });
});
