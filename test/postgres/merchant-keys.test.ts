import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { makeCheckoutToken } from "../../src/lib/checkout-token.js";
import type { PostgresStores } from "../../src/store/postgres/open-postgres-stores.js";
import { createTestDatabase, openMigratedStores, postgresUnavailable, type TestDatabase } from "../support/postgres.js";
import { createLiveIntents } from "./support/live-intents.js";
import { createSystemClock } from "../../src/lib/clock.js";
import { createIdGenerator } from "../../src/lib/ids.js";

const skip = await postgresUnavailable();

/**
 * The tables that are not distributed by merchant (docs/SCALING.md, "Past
 * one primary"): Citus keeps a copy of each on every worker. Every other
 * table's keys name merchant_id.
 */
const referenceTables = ["merchants", "api_keys", "mikro_orm_migrations"];

/** Every primary key, unique constraint, unique index and foreign key of a table outside referenceTables that does not name merchant_id. */
const offendersText = `
  with keys as (
    select c.conrelid as rel, c.conname::text as name,
           case c.contype when 'p' then 'primary key' when 'u' then 'unique constraint' else 'foreign key' end as kind,
           c.conkey as cols
    from pg_constraint c
    where c.connamespace = current_schema()::regnamespace and c.contype in ('p', 'u', 'f')
    union all
    select i.indrelid, ic.relname::text, 'unique index', i.indkey::int2[]
    from pg_index i join pg_class ic on ic.oid = i.indexrelid
    where ic.relnamespace = current_schema()::regnamespace and i.indisunique
  )
  select k.rel::regclass::text as "table", k.name, k.kind
  from keys k
  where not (k.rel::regclass::text = any($1::text[]))
    and not exists (
      select 1 from pg_attribute a
      where a.attrelid = k.rel and a.attname = 'merchant_id' and a.attnum = any(k.cols))
  order by 1, 2`;

/** Tables outside referenceTables with no merchant_id column at all. */
const unshardedText = `
  select c.relname::text as "table" from pg_class c
  where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
    and not (c.relname::text = any($1::text[]))
    and not exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'merchant_id' and not a.attisdropped)
  order by 1`;

describe("every table is keyed by its merchant (PostgreSQL catalog)", { skip }, () => {
  let db: TestDatabase;
  let stores: PostgresStores;
  let client: pg.Client;

  before(async () => {
    db = await createTestDatabase();
    stores = await openMigratedStores(db.url);
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    // The intents' merchant (a key makes it).
    await stores.apiKeys.addKey("merchantA", `sk_test_${Buffer.alloc(24, 1).toString("base64url")}`);
  });

  after(async () => {
    await client?.end();
    await stores?.close();
    await db?.drop();
  });

  it("has no key, unique index or foreign key without merchant_id outside the reference tables", async () => {
    const { rows } = await client.query(offendersText, [referenceTables]);
    assert.deepEqual(rows, []);
    assert.deepEqual((await client.query(unshardedText, [referenceTables])).rows, []);
  });

  it("names each kind of offender when one is there (the check is not vacuous)", async () => {
    await client.query("begin");
    try {
      await client.query(`create table probe_parent (merchant_id text not null, id text primary key)`);
      await client.query(`create table probe_child (merchant_id text not null, id text not null, parent_id text references probe_parent (id), code text, primary key (merchant_id, id))`);
      await client.query(`create unique index probe_child_code_key on probe_child (code)`);
      await client.query(`create table probe_global (id text primary key)`);
      const { rows } = await client.query(offendersText, [referenceTables]);
      assert.deepEqual(rows, [
        { table: "probe_child", name: "probe_child_code_key", kind: "unique index" },
        { table: "probe_child", name: "probe_child_parent_id_fkey", kind: "foreign key" },
        { table: "probe_global", name: "probe_global_pkey", kind: "primary key" },
        { table: "probe_global", name: "probe_global_pkey", kind: "unique index" },
        { table: "probe_parent", name: "probe_parent_pkey", kind: "primary key" },
        { table: "probe_parent", name: "probe_parent_pkey", kind: "unique index" },
      ]);
      assert.deepEqual((await client.query(unshardedText, [referenceTables])).rows, [{ table: "probe_global" }]);
    } finally {
      await client.query("rollback");
    }
  });

  it("finds a checkout link by the merchant its token carries, through the (checkout_token, merchant_id) key", async () => {
    const clock = createSystemClock();
    const live = createLiveIntents(clock, createIdGenerator(clock));
    const record = live({ clientReference: "routed-1" });
    assert.equal((await stores.intents.insert(record)).inserted, true);
    assert.equal((await stores.intents.findByCheckoutToken(record.checkoutToken))?.id, record.id);
    // The key itself, not a plan: on a one-row table the planner may pick any index of the merchant's.
    const { rows } = await client.query<{ indexdef: string }>("select indexdef from pg_indexes where indexname = 'payment_intents_checkout_token_key'");
    assert.match(rows[0]?.indexdef ?? "", /^CREATE UNIQUE INDEX payment_intents_checkout_token_key ON public\.payment_intents USING btree \(checkout_token, merchant_id\)$/);
  });

  it("finds a link made before tokens carried their merchant, and nothing for a token routed to another merchant", async () => {
    const clock = createSystemClock();
    const live = createLiveIntents(clock, createIdGenerator(clock));
    const legacyToken = Buffer.alloc(32, 7).toString("base64url");
    const legacy = live({ clientReference: "legacy-1", checkoutToken: legacyToken });
    assert.equal((await stores.intents.insert(legacy)).inserted, true);
    assert.equal((await stores.intents.findByCheckoutToken(legacyToken))?.id, legacy.id);
    // The same secret part routed to another merchant is not the link.
    assert.equal(await stores.intents.findByCheckoutToken(makeCheckoutToken("merchantB", Buffer.alloc(32, 7))), undefined);
  });
});
