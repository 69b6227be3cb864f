import { randomBytes } from "node:crypto";
import { after, before } from "node:test";
import pg from "pg";
import { createSystemClock, type Clock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";
import type { EventOutbox } from "../../src/store/event-store.js";
import { openPostgresStores, type PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import type { SecretBox } from "../../src/lib/secret-box.js";

/**
 * Where the PostgreSQL suites connect: TEST_DATABASE_URL, or the local server
 * (trust auth) that this project's machines run.
 */
export const adminUrl = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";

let availability: Promise<string | undefined> | undefined;

/**
 * postgresUnavailable resolves to undefined when a server answers, else to the
 * reason. With REQUIRE_POSTGRES=1 (CI) an absent server is an error instead of
 * a skip, so a broken database can never pass as "skipped".
 */
export function postgresUnavailable(): Promise<string | undefined> {
  availability ??= (async () => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query("select 1");
      return undefined;
    } catch (error) {
      const reason = `PostgreSQL not reachable at ${redact(adminUrl)}: ${(error as Error).message}`;
      if (process.env.REQUIRE_POSTGRES === "1") throw new Error(`${reason} (REQUIRE_POSTGRES=1)`);
      process.stderr.write(`# skipping PostgreSQL tests: ${reason}\n`);
      return reason;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return availability;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** createTestDatabase makes an empty database test_<random>, so runs never see each other's rows. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

/** queryDatabase runs one statement on the database at url, on a connection of its own. */
export async function queryDatabase<R extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await client.query<R>(sql, params);
  } finally {
    await client.end();
  }
}

/** adminQuery runs one statement on the admin database. */
export function adminQuery<R extends pg.QueryResultRow = Record<string, unknown>>(
  sql: string,
  params: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  return queryDatabase<R>(adminUrl, sql, params);
}

export interface MigratedStoresOptions {
  poolMax?: number;
  statementTimeoutMs?: number;
  /** Default: the configuration's, 2000 ms or the statement timeout if shorter. */
  lockTimeoutMs?: number;
  clock?: Clock;
  /** Apply the migrations first (default true); false for a database migrated already, or reached through a pooler. */
  migrate?: boolean;
  /** Records events with the intents' changes (none by default). */
  outbox?: EventOutbox;
  /** Seals webhook secrets (default: none, stored as they are). */
  secretBox?: SecretBox;
}

/** openMigratedStores opens the PostgreSQL stores on url with every migration applied. */
export function openMigratedStores(url: string, options: MigratedStoresOptions = {}): Promise<PostgresStores> {
  const clock = options.clock ?? createSystemClock();
  const statementTimeoutMs = options.statementTimeoutMs ?? 5000;
  return openPostgresStores({
    url,
    poolMax: options.poolMax ?? 10,
    statementTimeoutMs,
    lockTimeoutMs: options.lockTimeoutMs ?? Math.min(2000, statementTimeoutMs),
    migrate: options.migrate ?? true,
    clock,
    ids: createIdGenerator(clock),
    outbox: options.outbox,
    secretBox: options.secretBox,
  });
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

/**
 * useMigratedDatabase, for a file of store contract tests: one migrated
 * database made before them and dropped after, and empty(), which clears
 * every row before a test opens its own stores (every table hangs off
 * merchants, so truncating it cascades to all).
 */
export function useMigratedDatabase(): { url(): string; empty(): Promise<void> } {
  let database: TestDatabase | undefined;
  before(async () => {
    database = await createTestDatabase();
    await (await openMigratedStores(database.url, { poolMax: 1 })).close();
  });
  after(() => database?.drop());
  return {
    url: () => database!.url,
    empty: () => queryDatabase(database!.url, "truncate merchants cascade").then(() => undefined),
  };
}
